"""Memory of SCL's heatmap store and the cost of SCL in a training step.

1. **Store size.** ``SpatialConsistencyLoss`` keeps ``heatmaps [N, K, 2h, 2w]`` uint8 and
   ``known [N, 2h, 2w]`` bool in host memory (``h x w``: the last feature map of the training
   crop; ``K``: all ``C`` classes, or ``top_k``). The script computes that size for the paper's
   settings and *measures* it: it builds a ResNet-50 ``ClassifierWithLosses`` with the loss at the
   setting's input size and a small ``N`` (the heatmap size then comes from the shape probe, not
   from this script), reads the store's ``nbytes`` and asserts that it equals the formula at that
   ``N``.
2. **Step overhead on MultiDigits.** Training steps (mmengine ``train_step``: forward, losses,
   backward, Adam) of the shipped ``configs/spml/en_multidigits.py`` and ``scl_multidigits.py`` on
   the same real batch (with its crop boxes and flips), interleaved A B A B ...; median per
   variant and their ratio.
3. **SCL's own cost at COCO scale.** EN on ``[B, 80]`` logits against EN + SCL on ``[B, 80, 14,
   14]`` class maps (the 448 crop of a ResNet-50) with a 28 x 28 store: forward, backward and the
   store's read and EMA write, interleaved; what SCL adds to a step whatever the backbone.

    python tools/benchmarks/benchmark_spml.py [--steps 20] [--coco-batch 16] [--threads 1]

SCL paper: T. Verelst et al., "Spatial Consistency Loss for Training Multi-Label Classifiers from
Single-Label Annotations", WACV 2023 (supplementary material).
"""

from __future__ import annotations

import argparse
import os.path as osp
import platform
import statistics
import time
from collections.abc import Callable

import torch
from mmengine.config import Config
from mmengine.dataset import pseudo_collate
from mmengine.optim import build_optim_wrapper
from mmengine.registry import DefaultScope

import mlkd
from mlkd.models.losses import EntropyMaximisationLoss, SpatialConsistencyLoss
from mlkd.registry import DATASETS, MODELS

ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))

#: (name, training images N, classes C, input side, top_k): COCO 2014 train split of Cole et al.
#: (the SCL paper's Table K.1) and the whole train2014, both at 448 with every class; ImageNet-1K
#: at 224 with and without the paper's top-10 classes per image (its supplement's §G).
SETTINGS = (
    ('COCO 2014, Cole et al. train split, 448', 65_665, 80, 448, None),
    ('COCO 2014, all of train2014, 448', 82_081, 80, 448, None),
    ('ImageNet-1K, 224, every class', 1_281_167, 1000, 224, None),
    ('ImageNet-1K, 224, top-10 classes (SCL §G)', 1_281_167, 1000, 224, 10),
)
#: The ResNet-50 downsamples by 32: a side of S gives S/32 x S/32 features.
STRIDE = 32


def store_bytes(num_samples: int, num_classes: int, side: int, top_k: int | None) -> dict:
    """Bytes of the store by the formula (``heatmaps`` + ``known``; top-k bookkeeping apart)."""
    cells = (2 * side // STRIDE) ** 2
    kept = top_k or num_classes
    sizes = {'heatmaps': num_samples * kept * cells, 'known': num_samples * cells}
    if top_k is not None:  # float16 scores, int32 visits, int64 chosen classes
        sizes.update(
            scores=2 * num_samples * num_classes,
            visits=4 * num_samples,
            heatmap_classes=8 * num_samples * top_k,
        )
    return sizes


def measured_store(
    num_samples: int, num_classes: int, side: int, top_k: int | None
) -> tuple[dict, tuple[int, int]]:
    """Build a ResNet-50 ``ClassifierWithLosses`` with SCL at ``side``; the store's nbytes."""
    net = Config.fromfile(osp.join(ROOT, 'configs', '_base_', 'models', 'resnet50_ml.py')).model
    net.backbone.pop('init_cfg', None)  # no weight download
    net.head.num_classes = num_classes
    scl = dict(type='SpatialConsistencyLoss', num_samples=num_samples)
    if top_k is not None:
        scl['top_k'] = top_k
    with DefaultScope.overwrite_default_scope('mlkd'):
        model = MODELS.build(
            dict(
                type='ClassifierWithLosses',
                classifier=net.to_dict(),
                task_loss_weight=0.0,
                losses=dict(scl=scl),
                probe_input_size=(side, side),
            )
        )
    loss = model.loss_router['scl']
    return ({name: getattr(loss, name).nbytes for name in loss.host_state}, loss.heatmap_size)


def _gb(num_bytes: float) -> str:
    return f'{num_bytes / 1e9:,.2f} GB ({num_bytes / 2**30:,.2f} GiB)'


def report_memory(small_n: int) -> None:
    print('\n## Heatmap store (host memory)\n')
    print(
        '| setting | N | C | K kept | heatmap | heatmaps (N·K·cells B) | whole store, computed '
        f'| whole store, measured at N = {small_n}, x N / {small_n} |'
    )
    print('|---|---:|---:|---:|---|---:|---:|---:|')
    for name, num_samples, num_classes, side, top_k in SETTINGS:
        computed = store_bytes(num_samples, num_classes, side, top_k)
        small, size = measured_store(small_n, num_classes, side, top_k)
        # The measured store, built through the shape probe, must match the formula at small N.
        assert small == store_bytes(small_n, num_classes, side, top_k), (name, small)
        assert size == (2 * side // STRIDE, 2 * side // STRIDE), (name, size)
        scaled = sum(small.values()) * num_samples / small_n
        print(
            f'| {name} | {num_samples:,} | {num_classes} | {top_k or num_classes} | '
            f'{size[0]}x{size[1]} | {_gb(computed["heatmaps"])} | '
            f'{_gb(sum(computed.values()))} | {_gb(scaled)} |',
            flush=True,
        )


def _interleaved(fns: dict[str, Callable[[], None]], steps: int, warmup: int) -> dict:
    """Median seconds per call of each function, called in turn ``steps`` times (A B A B ...)."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times = {name: [] for name in fns}
    for _ in range(steps):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def multidigits_steps(steps: int) -> dict:
    """Interleaved training steps of the shipped EN and EN + SCL MultiDigits configs."""
    variants = {}
    for name in ('en', 'scl'):
        cfg = Config.fromfile(osp.join(ROOT, 'configs', 'spml', f'{name}_multidigits.py'))
        cfg.model.setdefault('data_preprocessor', cfg.data_preprocessor)
        with DefaultScope.overwrite_default_scope('mlkd'):
            torch.manual_seed(0)
            model = MODELS.build(cfg.model)
            dataset = DATASETS.build(cfg.train_dataloader.dataset)
        model.train()
        optim_wrapper = build_optim_wrapper(model, cfg.optim_wrapper)
        data = pseudo_collate([dataset[i] for i in range(cfg.train_dataloader.batch_size)])
        variants[name] = lambda m=model, o=optim_wrapper, d=data: m.train_step(d, o)
    return _interleaved(variants, steps, warmup=3)


def coco_loss_steps(batch: int, steps: int) -> dict:
    """EN alone vs EN + SCL (forward, backward, store update) at COCO's 80 classes, 448 crops."""
    gen = torch.Generator().manual_seed(0)
    classes, side = 80, 448 // STRIDE
    en = EntropyMaximisationLoss(alpha=0.1)
    scl = SpatialConsistencyLoss(num_samples=4 * batch, num_classes=classes, heatmap_size=2 * side)
    maps = torch.randn(batch, classes, side, side, generator=gen)
    gt = torch.zeros(batch, classes)
    gt[torch.arange(batch), torch.randint(0, classes, (batch,), generator=gen)] = 1
    box = torch.tensor([[0.1, 0.2, 0.7, 0.8]]).repeat(batch, 1)
    flip = torch.arange(batch) % 2 == 0
    visit = {'k': 0}

    def run(with_scl: bool) -> None:
        class_maps = maps.clone().requires_grad_()
        logits = class_maps.mean((2, 3))
        loss = en(logits, gt)
        if with_scl:
            # Cycle over the store's rows so that reads and writes hit known and new cells.
            idx = (torch.arange(batch) + visit['k'] * batch) % scl.num_samples
            visit['k'] += 1
            loss = loss + scl(class_maps, idx, box, flip)
        loss.backward()

    return _interleaved({'en': lambda: run(False), 'en+scl': lambda: run(True)}, steps, warmup=4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--steps', type=int, default=20, help='interleaved steps per variant')
    parser.add_argument('--coco-batch', type=int, default=16)
    parser.add_argument(
        '--small-n',
        type=int,
        default=64,
        help='N of the measured stores (the formula is checked at this N)',
    )
    parser.add_argument('--threads', type=int, default=1)
    parser.add_argument('--skip-memory', action='store_true')
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    mlkd.register_all_modules()
    print(
        f'torch {torch.__version__}, {platform.processor() or platform.machine()}, '
        f'threads={torch.get_num_threads()}'
    )
    if not args.skip_memory:
        report_memory(args.small_n)

    print('\n## Training step, MultiDigits (B = 64, 32x32, 4x4 class maps, 8x8 store)\n')
    digits = multidigits_steps(args.steps)
    print('| variant | median step (ms) |\n|---|---:|')
    for name, seconds in digits.items():
        print(f'| {name} | {seconds * 1e3:.1f} |')
    print(f'\nEN + SCL / EN: {digits["scl"] / digits["en"]:.3f}')

    print(
        f'\n## Loss cost at COCO scale (B = {args.coco_batch}, '
        'C = 80, 14x14 class maps, 28x28 store)\n'
    )
    coco = coco_loss_steps(args.coco_batch, args.steps)
    print('| losses | median fwd+bwd (+ store update) (ms) |\n|---|---:|')
    for name, seconds in coco.items():
        print(f'| {name} | {seconds * 1e3:.2f} |')
    print(
        f'\nSCL adds {(coco["en+scl"] - coco["en"]) * 1e3:.2f} ms per step at B = {args.coco_batch}'
    )


if __name__ == '__main__':
    main()
