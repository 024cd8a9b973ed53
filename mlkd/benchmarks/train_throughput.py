"""Training throughput at paper scale: images per second and peak memory of a training step.

Variants, each built from the shipped configs (``configs/_base_/pairs/<pair>.py`` with
``configs/_base_/methods/<method>.py``; random teacher) and trained with the pair's own optimizer
(``optim_wrapper`` of its recipe):

* ``student``: the student alone (its classifier with the dataset's preprocessor);
* ``<method> live``: the distiller with the live teacher (``eval()``, ``no_grad``);
* ``<method> cached``: the same distiller reading the teacher's outputs from a teacher cache
  written beforehand from the same batch.

Each runs fp32 and / or AMP (``MixedPrecisionOptimWrapper``: float16 with dynamic loss scaling on
CUDA, bfloat16 on CPU), at each (image size, batch). A step is ``train_step`` on a loader batch of
uint8 images in host memory (the preprocessor stacks, moves and normalises them, as in training);
data loading is measured apart (:mod:`.data_pipeline`). Variants are measured one after another,
each alone on the device (built, warmed up, timed, freed), so that a peak-memory figure is the
variant's own.
"""

from __future__ import annotations

import copy
import gc
import tempfile
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import torch
from mmengine.optim import build_optim_wrapper
from mmengine.registry import DefaultScope

from mlkd.registry import MODELS

from .common import (
    distiller_cfg,
    fill_teacher_cache,
    peak_memory,
    random_batch,
    student_cfg,
    timed_interleaved,
    use_teacher_cache,
)

#: The paper pair: ResNet-101 ML-Decoder teacher -> ResNet-34 ML-Decoder student, MS-COCO.
PAIR = 'coco_resnet101_to_resnet34'
#: (image side, batch): L2D / 3D at 224 px, batch 64; ASL / Two-way / SPML at 448 px, batch 32.
SHAPES = ((224, 64), (448, 32))
#: Live distillation methods timed by default (configs/_base_/methods/<name>.py).
METHODS = ('3d', 'l2d', 'mld')
#: The suite's shapes: the MultiDigits pair of the demo, 32 px, batch 4.
TINY = dict(pair='multidigits', shapes=((32, 4),))


@dataclass
class StepResult:
    """One measured variant."""

    variant: str
    precision: str
    image_size: int
    batch: int
    seconds: float
    peak_bytes: int | None

    @property
    def images_per_second(self) -> float:
        return self.batch / self.seconds


def _free(device: str) -> None:
    gc.collect()
    if device.startswith('cuda'):
        torch.cuda.empty_cache()


def _wrapper(model, optim_cfg: dict, amp: bool, device: str):
    cfg = copy.deepcopy(optim_cfg)
    if amp:
        cfg.update(type='MixedPrecisionOptimWrapper', device=device)
    with DefaultScope.overwrite_default_scope('mlkd'):
        return build_optim_wrapper(model, cfg)


def measure_variant(
    build: Callable[[], Any],
    data: dict,
    optim_cfg: dict,
    amp: bool,
    device: str,
    repeats: int,
    warmup: int,
    cache_dir: str | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, int | None]:
    """Median seconds of ``train_step`` and the peak memory of one more step (CUDA)."""
    with DefaultScope.overwrite_default_scope('mlkd'):
        model = build().to(device).train()
    wrapper = _wrapper(model, optim_cfg, amp, device)
    cache = None
    if cache_dir is not None:
        with wrapper.optim_context(model):
            cache = fill_teacher_cache(model, data, cache_dir, dict(benchmark=True))
    with use_teacher_cache(model, cache) if cache is not None else nullcontext():
        seconds = timed_interleaved(
            {'step': lambda: model.train_step(data, wrapper)}, repeats, device, warmup, clock
        )['step']
        with peak_memory(device) as memory:
            model.train_step(data, wrapper)
    if cache is not None:
        cache.close()
    return seconds, memory['peak']  # the caller frees the model (_free)


def run_steps(
    device: str,
    pair: str = PAIR,
    shapes: tuple[tuple[int, int], ...] = SHAPES,
    methods: tuple[str, ...] = METHODS,
    precisions: tuple[str, ...] = ('fp32', 'amp'),
    cached: bool = True,
    repeats: int = 10,
    warmup: int = 3,
    clock: Callable[[], float] = time.perf_counter,
    progress: Callable[[str], None] = print,
) -> list[StepResult]:
    """Every variant at every shape and precision (module doc)."""
    results = []
    for image_size, batch in shapes:
        for precision in precisions:
            amp = precision == 'amp'
            configs = {}
            for method in methods:
                model, pair_cfg = distiller_cfg(pair, method)
                model['probe_input_size'] = (image_size, image_size)
                configs[method] = model
            optim_cfg = pair_cfg.optim_wrapper.to_dict()
            data = random_batch(batch, image_size, pair_cfg.num_classes)
            first = configs[methods[0]]
            variants: dict[str, tuple[Callable[[], Any], bool]] = {
                'student': (lambda first=first: MODELS.build(student_cfg(first)), False)
            }
            for method, cfg in configs.items():
                variants[f'{method} live'] = (lambda cfg=cfg: MODELS.build(cfg), False)
                if cached:
                    variants[f'{method} cached'] = (lambda cfg=cfg: MODELS.build(cfg), True)
            for name, (build, use_cache) in variants.items():
                progress(f'{image_size} px, batch {batch}, {precision}: {name}')
                with tempfile.TemporaryDirectory() as folder:
                    seconds, peak = measure_variant(
                        build,
                        data,
                        optim_cfg,
                        amp,
                        device,
                        repeats,
                        warmup,
                        cache_dir=folder if use_cache else None,
                        clock=clock,
                    )
                _free(device)
                results.append(StepResult(name, precision, image_size, batch, seconds, peak))
    return results


def ratios(results: list[StepResult]) -> list[dict[str, Any]]:
    """Per shape and precision: each variant's step time against the student's
    (``distill / student``), cached against live, and AMP against fp32 (``amp / fp32``)."""
    index = {(r.variant, r.precision, r.image_size, r.batch): r for r in results}
    rows = []
    for r in results:
        student = index.get(('student', r.precision, r.image_size, r.batch))
        live = index.get((r.variant.replace('cached', 'live'), r.precision, r.image_size, r.batch))
        fp32 = index.get((r.variant, 'fp32', r.image_size, r.batch))
        rows.append(
            dict(
                variant=r.variant,
                precision=r.precision,
                image_size=r.image_size,
                batch=r.batch,
                images_per_second=r.images_per_second,
                step_ms=r.seconds * 1e3,
                peak_bytes=r.peak_bytes,
                vs_student=r.seconds / student.seconds if student else None,
                cached_vs_live=(
                    r.seconds / live.seconds if live and r.variant.endswith('cached') else None
                ),
                amp_vs_fp32=r.seconds / fp32.seconds if fp32 and r.precision == 'amp' else None,
            )
        )
    return rows
