"""Save the random-number generators in checkpoints so that resuming is exact."""
from __future__ import annotations

import random

import numpy as np
import torch
from mmengine.hooks import Hook

from mlkd.registry import HOOKS


@HOOKS.register_module()
class RandomStateHook(Hook):
    """Store torch / numpy / Python RNG states in each checkpoint and restore them on resume.

    mmengine restores weights, optimizer, schedulers and the sampler's epoch, but not the global
    generators that dropout, DropPath and the main-process data pipeline draw from (and that seed
    each epoch's data-loader workers). Without them a resumed run diverges from an uninterrupted
    one as soon as anything random runs. The states saved are those of the process writing the
    checkpoint (rank 0); under DDP other ranks resume with rank 0's streams, which is harmless
    but not bit-exact.
    """

    priority = 'VERY_HIGH'

    def before_save_checkpoint(self, runner, checkpoint: dict) -> None:
        state = {'torch': torch.get_rng_state(), 'numpy': np.random.get_state(),
                 'python': random.getstate()}
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            state['cuda'] = torch.cuda.get_rng_state_all()
        checkpoint['rng_state'] = state

    def after_load_checkpoint(self, runner, checkpoint: dict) -> None:
        state = checkpoint.get('rng_state')
        if not runner._resume or state is None:
            return
        torch.set_rng_state(state['torch'])
        np.random.set_state(state['numpy'])
        random.setstate(state['python'])
        if 'cuda' in state and torch.cuda.is_available() and \
                len(state['cuda']) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all(state['cuda'])
        runner.logger.info('Restored the torch / numpy / python random states of the checkpoint')
