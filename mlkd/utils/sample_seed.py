"""Augmentation randomness keyed by (seed, epoch, sample index).

A random augmentation of sample ``i`` in epoch ``e`` of a run seeded with ``s`` draws from
generators seeded with a hash of ``(s, e, i)`` (BLAKE2b), whichever process runs it. So the
augmented sample does not depend on the number of data-loader workers, on whether they persist
across epochs, on the number of training processes, or on where a run was resumed; different
epochs and different samples get independent streams.

How the key travels: :class:`~mlkd.datasets.EpochKeyedSampler` yields :class:`SampleKey` indices
(an ``int`` that also carries the seed and epoch, and pickles through the data-loader's index
queue), and :class:`~mlkd.datasets.KeyedDataset`, which :class:`~mlkd.engine.MLKDRunner` puts
around every data loader's dataset, runs the whole fetch of a keyed index, pipeline and refetches
included, inside :func:`sample_random_state`. A plain ``int`` index is fetched as before.
"""

from __future__ import annotations

import hashlib
import random
import struct
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch
from torch.utils.data import get_worker_info

__all__ = ['SampleKey', 'sample_random_state']

_KEY = struct.Struct('<3Q')  # seed, epoch, index as unsigned 64-bit ints


class SampleKey(int):
    """A dataset index (the ``int`` value) carrying the ``seed`` and ``epoch`` of its augmentation.

    Works wherever an ``int`` index does; arithmetic on it gives plain ``int``s.
    """

    seed: int
    epoch: int

    def __new__(cls, index: int, seed: int, epoch: int) -> SampleKey:
        key = super().__new__(cls, index)
        key.seed = seed
        key.epoch = epoch
        return key

    def __reduce__(self):
        # Compact pickling for the worker index queue (the default would pickle a __dict__ too).
        return SampleKey, (int(self), self.seed, self.epoch)

    def __repr__(self) -> str:
        return f'SampleKey(index={int(self)}, seed={self.seed}, epoch={self.epoch})'


@contextmanager
def sample_random_state(seed: int, epoch: int, index: int) -> Iterator[None]:
    """Seed ``random``, numpy's global generator and torch's CPU generator from the key.

    The three generators are those data transforms draw from (mmcv/mmpretrain use numpy's global
    functions, torchvision uses torch, others ``random``). In the main process (``num_workers=0``)
    their previous states are put back on exit, so fetching leaves the training's own random
    streams (dropout, batch augmentations) untouched. A data-loader worker draws from them for
    nothing but fetching, which reseeds them for every sample, so it skips that (saving and
    restoring numpy's state is the costliest part). CUDA generators are neither used nor changed.

    The seeds are three slices of a BLAKE2b hash of the key (1 us of CPU).
    ``np.random.SeedSequence`` would take 7 us on its own and add some 23 us to the MultiDigits
    fetch it precedes (``tools/benchmarks/benchmark_sample_seed.py``).

    Raises:
        ValueError: naming the key when a part is negative or does not fit in 64 bits.
    """
    if not all(0 <= part < 2**64 for part in (seed, epoch, index)):
        raise ValueError(
            f'sample_random_state: seed, epoch and index must be in [0, 2**64), '
            f'got seed={seed}, epoch={epoch}, index={index} (check '
            '`randomness.seed`)'
        )
    digest = hashlib.blake2b(
        _KEY.pack(seed, epoch, index), digest_size=20, person=b'mlkd-sample'
    ).digest()
    saved = None
    if get_worker_info() is None:
        saved = random.getstate(), np.random.get_state(), torch.get_rng_state()
    random.seed(int.from_bytes(digest[:8], 'little'))
    np.random.seed(int.from_bytes(digest[8:12], 'little'))
    torch.default_generator.manual_seed(int.from_bytes(digest[12:], 'little'))
    try:
        yield
    finally:
        if saved is not None:
            random.setstate(saved[0])
            np.random.set_state(saved[1])
            torch.set_rng_state(saved[2])
