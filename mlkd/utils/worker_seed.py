"""Data-loader worker seeding that changes with the epoch.

mmengine's ``worker_init_fn`` seeds numpy and ``random`` in each worker with
``num_workers * rank + worker_id + seed``. With non-persistent workers the workers are re-created
every epoch with the same seeds, so every numpy/``random``-driven augmentation (mmpretrain's
transforms use numpy) repeats exactly from epoch to epoch. :func:`epoch_seeded_worker_init_fn`
adds the epoch, read from the MessageHub that ``RuntimeInfoHook`` updates before the epoch's
iterator (and its workers) is created. :mod:`mlkd.utils.compat` installs it as the Runner's default.
"""
from __future__ import annotations

import random
import warnings

import numpy as np
import torch
from mmengine.registry import FUNCTIONS


def _current_epoch() -> int | None:
    from mmengine.logging import MessageHub
    try:
        hub = MessageHub.get_current_instance()
    except Exception:  # no hub in this process (spawned workers): caller falls back
        return None
    epoch = hub.get_info('epoch')
    return int(epoch) if epoch is not None else None


def worker_seed(seed: int, epoch: int, rank: int, worker_id: int) -> int:
    """A 32-bit seed that differs for every (seed, epoch, rank, worker) combination."""
    return int(np.random.SeedSequence([seed, epoch, rank, worker_id]).generate_state(1)[0])


@FUNCTIONS.register_module()
def epoch_seeded_worker_init_fn(worker_id: int,
                                num_workers: int,
                                rank: int,
                                seed: int,
                                disable_subprocess_warning: bool = False) -> None:
    """Seed numpy, ``random`` and torch in a data-loader worker from (seed, epoch, rank, worker).

    Same signature as mmengine's ``worker_init_fn``, so the Runner calls it unchanged. Under the
    'spawn' start method the worker has no MessageHub; the epoch is then replaced by the seed torch
    gave this worker (drawn afresh for every iterator, so it still changes per epoch).
    """
    epoch = _current_epoch()
    if epoch is None:
        epoch = torch.initial_seed() % (2**31)
    seed_value = worker_seed(seed, epoch, rank, worker_id)
    np.random.seed(seed_value)
    random.seed(seed_value)
    torch.manual_seed(seed_value)
    if disable_subprocess_warning and worker_id != 0:
        warnings.simplefilter('ignore')
