"""Save the random-number generators in checkpoints so that resuming is exact."""

from __future__ import annotations

import random

import numpy as np
import torch
from mmengine.hooks import Hook
from torch.utils.data import DataLoader

from mlkd.datasets.samplers import EpochKeyedSampler
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

    Each data loader of the run also gets a generator of its own (seeded with the run's seed)
    right before its first epoch. A loader draws its workers' base seed whenever it starts an
    iterator: once per run with persistent workers, every epoch without. From the global torch
    generator, that draw shifts the training's stream (dropout) by one draw more in a resumed run
    with persistent workers than in an uninterrupted one. Augmentations do not depend on the base
    seed when the sampler keys them (:class:`~mlkd.datasets.EpochKeyedSampler`); a warning says
    when the training sampler does not, since its augmentations then differ after resuming.
    """

    priority = 'VERY_HIGH'

    def before_train_epoch(self, runner) -> None:
        loader = runner.train_dataloader
        sampler = getattr(loader.batch_sampler, 'sampler', loader.sampler)
        if self._own_generator(runner, loader) and not isinstance(sampler, EpochKeyedSampler):
            runner.logger.warning(
                f'train_dataloader.sampler is {type(sampler).__name__}, which does not key '
                'augmentations by (seed, epoch, index): they depend on the number of workers '
                'and differ after resuming. Use EpochKeyedSampler for exact resumes.'
            )

    def before_val_epoch(self, runner) -> None:
        self._own_generator(runner, runner.val_dataloader)

    def before_test_epoch(self, runner) -> None:
        self._own_generator(runner, runner.test_dataloader)

    @staticmethod
    def _own_generator(runner, loader) -> bool:
        """Give ``loader`` a generator seeded with the run's seed; True if it had none."""
        if not isinstance(loader, DataLoader) or loader.generator is not None:
            return False
        loader.generator = torch.Generator().manual_seed(runner.seed)
        return True

    def before_save_checkpoint(self, runner, checkpoint: dict) -> None:
        state = {
            'torch': torch.get_rng_state(),
            'numpy': np.random.get_state(),
            'python': random.getstate(),
        }
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
        if (
            'cuda' in state
            and torch.cuda.is_available()
            and len(state['cuda']) == torch.cuda.device_count()
        ):
            torch.cuda.set_rng_state_all(state['cuda'])
        runner.logger.info('Restored the torch / numpy / python random states of the checkpoint')
