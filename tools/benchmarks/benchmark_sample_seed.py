"""Per-sample cost of keyed augmentation seeding (``mlkd.utils.sample_seed``).

Times, per sample:

* the keyed random state alone: hashing ``(seed, epoch, index)`` and seeding ``random``,
  numpy's global generator and torch's CPU generator, as in a data-loader worker, and the same
  with the three states saved and put back, as in the main process (``num_workers=0``);
* in a data-loader worker, where training fetches, as everything below: a fetch from the
  MultiDigits training set with the shipped pipeline (``RandomCrop`` with padding, ``PackInputs``)
  by a plain ``int`` index and by a :class:`~mlkd.utils.sample_seed.SampleKey`;
* for comparison, ``np.random.SeedSequence([seed, epoch, index])`` alone and followed by the
  MultiDigits fetch (the hash mlkd does not use: it also slows down the numpy code after it);
* the same two fetches with the 224 x 224 COCO/VOC augmentations (random-colour cutout and UDA
  RandAugment on an in-memory image, no decoding), where the seeding matters least.

Each timing is the thread's CPU time (so load from other processes does not count), median and
minimum over ``--repeats`` rounds of ``--samples`` fetches; within a round the contenders run one
after the other.

Usage::

    python tools/benchmarks/benchmark_sample_seed.py [--samples 2000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from mlkd import register_all_modules  # importing mlkd installs the keyed dataset fetch
from mlkd.datasets import MultiDigits
from mlkd.utils.sample_seed import SampleKey, sample_random_state


class _InMemoryImages(MultiDigits):
    """MultiDigits data infos with a fixed 224 x 224 RGB image (the L2D input size)."""

    def get_data_info(self, idx: int) -> dict:
        info = super().get_data_info(idx)
        info['img'] = np.ascontiguousarray(
            np.broadcast_to(info['img'][:1, :1], (224, 224, 3)) + np.uint8(idx % 200)
        )
        info['img_shape'] = info['ori_shape'] = (224, 224)
        return info


def _per_sample_us(fetch: Callable[[int], object], samples: int) -> float:
    # CPU time of this thread: other processes on a shared machine do not count.
    start = time.thread_time()
    for index in range(samples):
        fetch(index)
    return (time.thread_time() - start) / samples * 1e6


def _seed_sequence(index: int) -> np.ndarray:
    return np.random.SeedSequence([0, 1, index]).generate_state(4)


def _rounds(
    contenders: dict[str, Callable[[int], object]], args: argparse.Namespace
) -> dict[str, list[float]]:
    """Per-sample microseconds of each contender in each round (after one warm-up round)."""
    rounds = {name: [] for name in contenders}
    for round_index in range(args.repeats + 1):
        for name, fetch in contenders.items():
            per_sample = _per_sample_us(fetch, args.samples)
            if round_index:
                rounds[name].append(per_sample)
    return rounds


def _in_a_worker(function: Callable[[], dict]) -> dict:
    """``function()`` run inside a data-loader worker (fork), where training fetches."""
    return next(iter(DataLoader(_Call(function), batch_size=None, num_workers=1)))


class _Call(Dataset):
    """A one-item dataset whose item is ``function()``."""

    def __init__(self, function: Callable[[], dict]) -> None:
        self.function = function

    def __len__(self) -> int:
        return 1

    def __getitem__(self, index: int) -> dict:
        return self.function()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--samples', type=int, default=2000)
    parser.add_argument('--repeats', type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    register_all_modules()  # mlkd's transforms (RandomColorCutout, UDARandAugment) by name

    digits = MultiDigits(
        num_samples=args.samples,
        pipeline=[
            dict(type='RandomCrop', crop_size=32, padding=2, padding_mode='constant'),
            dict(type='PackInputs'),
        ],
    )
    l2d = _InMemoryImages(
        num_samples=args.samples,
        pipeline=[
            dict(type='RandomColorCutout', cutout_factor=0.5, prob=1.0),
            dict(type='UDARandAugment'),
            dict(type='PackInputs'),
        ],
    )

    def seeding_only(index: int) -> None:
        with sample_random_state(0, 1, index):
            pass

    in_worker = {
        'keyed state, in a worker': seeding_only,
        'MultiDigits fetch, int index': lambda i: digits[i],
        'MultiDigits fetch, SampleKey': lambda i: digits[SampleKey(i, 0, 1)],
        'SeedSequence alone': _seed_sequence,
        'SeedSequence, then int fetch': lambda i: (_seed_sequence(i), digits[i]),
        'L2D 224px fetch, int index': lambda i: l2d[i],
        'L2D 224px fetch, SampleKey': lambda i: l2d[SampleKey(i, 0, 1)],
    }
    rounds = {'keyed state, main process': _rounds({'main': seeding_only}, args)['main']}
    rounds.update(_in_a_worker(lambda: _rounds(in_worker, args)))

    print(
        f'machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, '
        f'torch {torch.__version__}, numpy {np.__version__}, 1 torch thread; load average '
        f'{os.getloadavg()[0]:.2f}'
    )
    print(f'{args.repeats} rounds of {args.samples} samples; CPU microseconds per sample')
    print(f'| {"task":<30} | {"median us":>9} | {"min us":>7} |')
    print(f'|{"-" * 32}|{"-" * 11}|{"-" * 9}|')
    for name, times in rounds.items():
        print(f'| {name:<30} | {statistics.median(times):9.1f} | {min(times):7.1f} |')
    for label in ('MultiDigits', 'L2D 224px'):
        plain = statistics.median(rounds[f'{label} fetch, int index'])
        keyed = statistics.median(rounds[f'{label} fetch, SampleKey'])
        print(
            f'{label}: keyed fetch costs {keyed - plain:+.1f} us per sample '
            f'({(keyed / plain - 1) * 100:+.1f} %)'
        )


if __name__ == '__main__':
    main()
