"""The checks of ``tools/benchmarks/gpu_check.py``: does distillation run right on this device?

Every check builds the distillers of the shipped configs (a pair of ``configs/_base_/pairs`` with a
method of ``configs/_base_/methods``, random teacher) and compares what the device computes with a
reference computed on the same batch from the same weights:

* **fp16 step**: losses of a float16-autocast step (``MixedPrecisionOptimWrapper``, the
  ``--amp`` path, dynamic loss scaling) against an fp32 step; gradients finite after unscaling and
  pointing the way of the fp32 ones (cosine); step time and peak memory of both.
* **loss-scale overflow**: a step whose scaled loss overflows float16 (the loss multiplied by
  :data:`OVERFLOW_FACTOR` before ``backward``) is skipped (weights unchanged), the scale is
  halved, and the next step updates the weights with finite values.
* **teacher cache**: losses and gradients of a step reading the teacher's outputs from a cache
  written by the live teacher equal those of the live step bit for bit (fp32 and fp16 autocast).
* **channels-last**: the same losses with networks and inputs in channels-last memory order;
  step time of both under fp16 autocast.
* **peak memory**: on CUDA, the distillation step needs no more than the student step plus the
  teacher's ``no_grad`` forward (and 25 % slack for connectors and losses): a teacher that kept
  its graph would break it. On CPU the process's resident high-water marks are reported only.
* **metrics on device**: ``MultiLabelMetrics`` / ``SampleMAP`` and the functional AP and
  P/R/F1 fed device tensors (with tied scores) equal the CPU results.
* **DDP 1 / 2 processes**: a ``MMDistributedDataParallel`` step of world size 1, and of 2 with
  half the batch per rank (NCCL on CUDA where >= 2 GPUs, gloo on CPU), equals one process on the
  whole batch: the global-batch losses (NDD, LED's instance term, CRD) on every rank, the others'
  mean over ranks, and the weight update (SGD, lr 1: minus the gradient). Batch norm: SyncBN on
  CUDA; on CPU (no SyncBN) the BN layers use their running statistics in both runs.
"""

from __future__ import annotations

import copy
import math
import os
import socket
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
import torch.distributed as dist
from mmengine.optim import build_optim_wrapper
from mmengine.registry import DefaultScope

from mlkd.registry import MODELS

from .common import (
    distiller_cfg,
    fill_teacher_cache,
    mib,
    peak_memory,
    random_batch,
    student_cfg,
    timed_interleaved,
    use_teacher_cache,
)

#: The methods checked by default (configs/_base_/methods/<name>.py).
METHODS = ('3d', 'l2d', 'fitnet', 'crd')
#: Sizes: the pair of configs/_base_/pairs, the batch, the image side (None: the pair's).
SIZES = {
    'tiny': dict(pair='multidigits', batch=4, image_size=None),
    'full': dict(pair='coco_resnet101_to_resnet34', batch=32, image_size=224),
}
#: The fp16 loss of a step may differ from the fp32 one by this much (relative, per loss term).
FP16_LOSS_RTOL = 2e-2
#: Cosine between the fp16 step's (unscaled) gradient and the fp32 one, over all weights. fp16
#: rounding alone, through the backward of a randomly initialised ResNet-34, turns the early
#: layers' gradients by a few degrees (CPU: whole-vector cosine 0.96 at 64 px and batch 2, 0.98 at
#: 128 px and batch 8; docs/benchmarks/gpu.md): the check is for a broken graph, not for that.
FP16_GRAD_COSINE = 0.95
#: Norm of the fp16 step's unscaled gradient against the fp32 one (a wrong unscale is off by the
#: loss scale).
FP16_GRAD_NORM_RTOL = 0.05
#: Channels-last against contiguous, fp32: relative difference per loss term.
CHANNELS_LAST_RTOL = 1e-4
#: One process against DDP: relative difference of losses and weight updates.
DDP_RTOL = 1e-3
#: fp16 steps skipped at most (scale halved each time) before the gradients must be finite.
MAX_SKIPPED = 24
#: Multiplies the loss of the injected-overflow step: far beyond float16's range once scaled.
OVERFLOW_FACTOR = 1e20
#: Slack of the peak-memory check (CUDA), relative to the student step's own peak.
MEMORY_SLACK = 0.25
SGD = dict(optimizer=dict(type='SGD', lr=0.01))


@dataclass
class Check:
    """One row of the table: ``status`` is ``'pass'``, ``'fail'``, ``'skip'`` or ``'info'``."""

    name: str
    method: str
    status: str
    measured: str
    numbers: dict = field(default_factory=dict)


@dataclass
class Setup:
    """What the checks run on."""

    device: str
    size: str = 'tiny'
    methods: tuple[str, ...] = METHODS
    batch: int | None = None
    image_size: int | None = None
    repeats: int = 3
    processes: int = 2
    init_scale: float = 2.0**16

    def __post_init__(self) -> None:
        preset = SIZES[self.size]
        self.pair = preset['pair']
        self.batch = self.batch or preset['batch']
        self.model_cfgs = {}
        for method in self.methods:
            model, pair_cfg = distiller_cfg(self.pair, method)
            self.image_size = self.image_size or preset['image_size'] or pair_cfg.image_size
            model['probe_input_size'] = (self.image_size, self.image_size)
            self.model_cfgs[method] = model
            self.num_classes = pair_cfg.num_classes
        ranks = max(self.processes, 1)
        if self.batch < ranks or self.batch % ranks:
            raise ValueError(
                f'--batch must be a multiple of --processes ({ranks}; the DDP check splits '
                f'the batch over the ranks), got {self.batch}'
            )

    def batch_data(self) -> dict:
        return random_batch(self.batch, self.image_size, self.num_classes)

    def build(self, method: str, channels_last: bool = False, device: str | None = None):
        """The method's distiller on the device, in train mode, weights seeded (every build of a
        method starts from the same weights)."""
        cfg = copy.deepcopy(self.model_cfgs[method])
        if channels_last:
            cfg['data_preprocessor'] = dict(cfg['data_preprocessor'], channels_last=True)
        torch.manual_seed(0)
        with DefaultScope.overwrite_default_scope('mlkd'):
            model = MODELS.build(cfg)
        model.to(device or self.device)
        if channels_last:
            model.to(memory_format=torch.channels_last)
        return model.train()

    def wrapper(
        self,
        model,
        amp: bool,
        optimizer: dict | None = None,
        loss_scale: str | float | dict = 'dynamic',
    ):
        """An ``OptimWrapper`` (``amp=False``) or the ``--amp`` one, ``MixedPrecisionOptimWrapper``
        in float16 (dynamic loss scaling by default)."""
        cfg = dict(optimizer or SGD)
        if amp:
            cfg.update(
                type='MixedPrecisionOptimWrapper',
                dtype='float16',
                device=self.device,
                loss_scale=loss_scale,
            )
        with DefaultScope.overwrite_default_scope('mlkd'):
            return build_optim_wrapper(model, cfg)


# ------------------------------------------------------------------------------------ helpers


def step_losses(model, data: dict, wrapper, seed: int = 1) -> tuple[torch.Tensor, dict]:
    """The forward half of ``BaseModel.train_step`` (preprocess and losses in the wrapper's
    context, ``parse_losses``), the random stream seeded first (CRD's negatives)."""
    torch.manual_seed(seed)
    with wrapper.optim_context(model):
        processed = model.data_preprocessor(data, True)
        losses = model._run_forward(processed, mode='loss')
    return model.parse_losses(losses)


def gradients(model) -> dict[str, torch.Tensor]:
    return {
        name: p.grad.detach().clone()
        for name, p in model.named_parameters()
        if p.requires_grad and p.grad is not None
    }


def weights(model) -> dict[str, torch.Tensor]:
    return {name: p.detach().clone() for name, p in model.named_parameters() if p.requires_grad}


def relative_differences(a: dict, b: dict) -> dict[str, float]:
    """Per key: ``max |a - b| / max(max |b|, 1e-12)`` over the entries (keys of ``b``)."""
    out = {}
    for key, reference in b.items():
        reference = torch.as_tensor(reference).detach().double().cpu()
        value = torch.as_tensor(a[key]).detach().double().cpu()
        scale = max(float(reference.abs().max()), 1e-12) if reference.numel() else 1.0
        out[key] = float((value - reference).abs().max()) / scale if reference.numel() else 0.0
    return out


def _norm(tensors: dict[str, torch.Tensor]) -> float:
    return float(torch.cat([t.double().flatten() for t in tensors.values()]).norm())


def cosine(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> float:
    x = torch.cat([a[k].double().flatten() for k in b])
    y = torch.cat([b[k].double().flatten() for k in b])
    return float(x @ y / (x.norm() * y.norm()).clamp_min(1e-300))


def _worst(differences: dict[str, float]) -> tuple[str, float]:
    key = max(differences, key=differences.get)
    return key, differences[key]


def _identical(a: dict, b: dict) -> bool:
    return set(a) == set(b) and all(torch.equal(a[k], b[k]) for k in b)


@contextmanager
def ieee_fp32() -> Iterator[None]:
    """fp32 matmuls and convolutions in IEEE fp32, not TF32 (cuDNN's default on Ampere and
    later), within the block: the checks compare fp32 results across batch splits and memory
    layouts, where TF32's 10-bit mantissa would dominate every difference."""
    previous = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = previous


@contextmanager
def deterministic_algorithms() -> Iterator[list[str]]:
    """Deterministic kernels within the block (as ``randomness.deterministic=True``); yields the
    warnings of operations that have none (warn-only, so the check still runs)."""
    previous = (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
        torch.backends.cudnn.deterministic,
        torch.backends.cudnn.benchmark,
    )
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = True, False
    notes: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            yield notes
        finally:
            torch.use_deterministic_algorithms(previous[0], warn_only=previous[1])
            torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = previous[2:]
    notes.extend(str(w.message).split('\n')[0] for w in caught if 'deterministic' in str(w.message))


# ------------------------------------------------------------------------------------- checks


def check_fp16_step(setup: Setup, method: str, data: dict) -> list[Check]:
    """fp16 step vs fp32 step, then the injected overflow and the recovery.

    Dynamic loss scaling starts at 2^16 and halves on every overflow, skipping that step, as in
    training: the fp16 step is retried from the same weights until its scaled gradients are
    finite (at most :data:`MAX_SKIPPED` times) and the skipped steps are reported.
    """
    model = setup.build(method)
    start = copy.deepcopy(model.state_dict())
    fp32 = setup.wrapper(model, amp=False)
    with peak_memory(setup.device) as mem32:
        loss, log32 = step_losses(model, data, fp32)
        fp32.backward(loss)
    grads32 = gradients(model)
    fp32.zero_grad()

    amp = setup.wrapper(model, amp=True, loss_scale=dict(init_scale=setup.init_scale))
    initial_scale, skipped = None, -1
    finite = False
    while not finite and skipped < MAX_SKIPPED:
        skipped += 1
        model.load_state_dict(start)
        with peak_memory(setup.device) as mem16:
            loss, log16 = step_losses(model, data, amp)
            amp.backward(loss)
        initial_scale = initial_scale or amp.loss_scaler.get_scale()
        amp.loss_scaler.unscale_(amp.optimizer)
        grads16 = gradients(model)
        finite = all(bool(torch.isfinite(g).all()) for g in grads16.values())
        amp.step()  # skipped (and the scale halved) when not finite
        amp.zero_grad()
    term, loss_diff = _worst(relative_differences(log16, log32))
    cos = cosine(grads16, grads32) if finite else math.nan
    norm_ratio = _norm(grads16) / max(_norm(grads32), 1e-300) if finite else math.nan
    numbers = dict(
        loss_rel_diff=loss_diff,
        worst_term=term,
        grad_cosine=cos,
        grad_norm_ratio=norm_ratio,
        grads_finite=finite,
        skipped_steps=skipped,
        loss_scale=amp.loss_scaler.get_scale(),
        peak_fp32=mem32['peak'],
        peak_fp16=mem16['peak'],
    )
    timing = ''
    if setup.repeats:

        def fp32_step():
            model.load_state_dict(start)
            fp32.update_params(step_losses(model, data, fp32)[0])

        def fp16_step():
            model.load_state_dict(start)
            amp.update_params(step_losses(model, data, amp)[0])

        times = timed_interleaved(
            {'fp32': fp32_step, 'fp16': fp16_step}, setup.repeats, setup.device, warmup=1
        )
        numbers.update(step_ms_fp32=times['fp32'] * 1e3, step_ms_fp16=times['fp16'] * 1e3)
        timing = (
            f'; step fp32 {times["fp32"] * 1e3:.1f} ms, fp16 {times["fp16"] * 1e3:.1f} ms '
            f'(x{times["fp32"] / times["fp16"]:.2f})'
        )
    if mem32['peak'] is not None:
        timing += f'; peak fp32 {mib(mem32["peak"])}, fp16 {mib(mem16["peak"])}'
    ok = (
        finite
        and loss_diff <= FP16_LOSS_RTOL
        and cos >= FP16_GRAD_COSINE
        and abs(norm_ratio - 1) <= FP16_GRAD_NORM_RTOL
    )
    rows = [
        Check(
            'fp16 step',
            method,
            'pass' if ok else 'fail',
            f'max loss rel. diff {loss_diff:.1e} ({term}; tol {FP16_LOSS_RTOL:g}); grads '
            f'{"finite" if finite else "NOT finite"} after {skipped} skipped step(s) (scale '
            f'{initial_scale:g} -> {numbers["loss_scale"]:g}), to fp32: cosine {cos:.4f} (>= '
            f'{FP16_GRAD_COSINE}), norm ratio {norm_ratio:.4f} (1 ± {FP16_GRAD_NORM_RTOL})'
            + timing,
            numbers,
        )
    ]
    rows.append(_check_overflow(setup, method, model, data, amp))
    return rows


def _check_overflow(setup: Setup, method: str, model, data: dict, amp) -> Check:
    """Inject an overflow; then train on until an update happens (a fresh overflow at the halved
    scale is skipped too, as in training)."""
    before, scale = weights(model), amp.loss_scaler.get_scale()
    loss, _ = step_losses(model, data, amp)
    amp.backward(loss * OVERFLOW_FACTOR)
    amp.step()
    amp.zero_grad()
    skipped = _identical(weights(model), before)
    halved_to = amp.loss_scaler.get_scale()
    updated, further = False, 0
    while not updated and further <= MAX_SKIPPED:
        previous = weights(model)
        amp.update_params(step_losses(model, data, amp)[0])
        updated = not _identical(weights(model), previous)
        further += 0 if updated else 1
    finite = all(bool(torch.isfinite(w).all()) for w in weights(model).values())
    ok = skipped and halved_to == scale * 0.5 and updated and finite
    return Check(
        'loss-scale overflow',
        method,
        'pass' if ok else 'fail',
        f'injected: scale {scale:g} -> {halved_to:g}, step '
        f'{"skipped (weights unchanged)" if skipped else "NOT skipped"}; then weights '
        f'{"updated" if updated else "NOT updated"} after {further} more overflow(s), '
        f'{"finite" if finite else "NOT finite"}, scale {amp.loss_scaler.get_scale():g}',
        dict(
            scale=scale,
            scale_after_overflow=halved_to,
            skipped=skipped,
            recovered=updated,
            further_overflows=further,
        ),
    )


def check_teacher_cache(setup: Setup, method: str, data: dict, folder: str) -> Check:
    """Live vs cached step, bit for bit, in fp32 and under fp16 autocast."""
    model = setup.build(method)
    start = copy.deepcopy(model.state_dict())
    results, notes = {}, []
    with deterministic_algorithms() as nondeterministic:
        for amp in (False, True):
            # Loss scale 1: the same gradients either way, and no overflow at random init.
            wrapper = setup.wrapper(model, amp=amp, loss_scale=1.0)
            runs = {}
            for source in ('live', 'cached'):
                model.load_state_dict(start)
                cache = None
                if source == 'cached':
                    with wrapper.optim_context(model):
                        cache = fill_teacher_cache(
                            model, data, os.path.join(folder, f'{method}_{amp}'), dict(check=1)
                        )
                    model.load_state_dict(start)  # writing ran the losses (CRD's banks moved)
                with use_teacher_cache(model, cache):
                    loss, log_vars = step_losses(model, data, wrapper)
                    wrapper.backward(loss)
                runs[source] = (log_vars, gradients(model))
                wrapper.zero_grad()
            same_losses = _identical(runs['cached'][0], runs['live'][0])
            same_grads = _identical(runs['cached'][1], runs['live'][1])
            results['fp16' if amp else 'fp32'] = dict(losses=same_losses, grads=same_grads)
            if not (same_losses and same_grads):
                diff = relative_differences(
                    {**runs['cached'][0], **runs['cached'][1]},
                    {**runs['live'][0], **runs['live'][1]},
                )
                notes.append(f'{"fp16" if amp else "fp32"}: max rel. diff {_worst(diff)[1]:.1e}')
        counts = f'{len(runs["live"][0])} losses, {len(runs["live"][1])} gradients'
    ok = all(r['losses'] and r['grads'] for r in results.values())
    text = (
        f'fp32 and fp16: {counts} bit-identical to the live teacher'
        if ok
        else '; '.join(
            f'{p}: losses {"same" if r["losses"] else "DIFFER"}, grads '
            f'{"same" if r["grads"] else "DIFFER"}'
            for p, r in results.items()
        )
        + ('; ' + '; '.join(notes) if notes else '')
    )
    if nondeterministic:
        text += f'; no deterministic kernel: {sorted(set(nondeterministic))[0]}'
    return Check(
        'teacher cache', method, 'pass' if ok else 'fail', text, dict(results, notes=notes)
    )


def check_channels_last(setup: Setup, method: str, data: dict) -> Check:
    """Channels-last networks and inputs: same fp32 losses; fp16 step time of both layouts."""
    models = {
        layout: setup.build(method, layout == 'channels_last')
        for layout in ('contiguous', 'channels_last')
    }
    logs, steps = {}, {}
    for layout, model in models.items():
        fp32 = setup.wrapper(model, amp=False)
        logs[layout] = step_losses(model, data, fp32)[1]
        amp = setup.wrapper(model, amp=True)
        start = copy.deepcopy(model.state_dict())

        def step(model=model, amp=amp, start=start):
            model.load_state_dict(start)
            amp.update_params(step_losses(model, data, amp)[0])

        steps[layout] = step
    term, diff = _worst(relative_differences(logs['channels_last'], logs['contiguous']))
    numbers: dict[str, Any] = dict(loss_rel_diff=diff)
    timing = ''
    if setup.repeats:
        times = timed_interleaved(steps, setup.repeats, setup.device, warmup=1)
        numbers['step_ms'] = {k: v * 1e3 for k, v in times.items()}
        timing = (
            f'; fp16 step contiguous {times["contiguous"] * 1e3:.1f} ms, channels-last '
            f'{times["channels_last"] * 1e3:.1f} ms '
            f'(x{times["contiguous"] / times["channels_last"]:.2f})'
        )
    return Check(
        'channels-last',
        method,
        'pass' if diff <= CHANNELS_LAST_RTOL else 'fail',
        f'max loss rel. diff {diff:.1e} ({term}; tol {CHANNELS_LAST_RTOL:g})' + timing,
        numbers,
    )


def check_peak_memory(setup: Setup, method: str, data: dict) -> Check:
    """Peak memory of the distillation step against the student step plus the teacher forward
    (CUDA only: the CPU allocator gives no per-step peak)."""
    if not setup.device.startswith('cuda'):
        return Check('peak memory', method, 'skip', 'CUDA only')
    model = setup.build(method)
    wrapper = setup.wrapper(model, amp=True)
    wrapper.update_params(step_losses(model, data, wrapper)[0])  # optimizer state allocated
    with peak_memory(setup.device) as distill:
        wrapper.update_params(step_losses(model, data, wrapper)[0])
    with peak_memory(setup.device) as teacher, torch.no_grad(), wrapper.optim_context(model):
        model.teacher(model.data_preprocessor(data, True)['inputs'], mode='tensor')
    del model, wrapper
    torch.manual_seed(0)
    with DefaultScope.overwrite_default_scope('mlkd'):
        student = MODELS.build(student_cfg(setup.model_cfgs[method])).to(setup.device).train()
    wrapper = setup.wrapper(student, amp=True)
    wrapper.update_params(step_losses(student, data, wrapper)[0])
    with peak_memory(setup.device) as alone:
        wrapper.update_params(step_losses(student, data, wrapper)[0])
    numbers = dict(distill=distill['peak'], student=alone['peak'], teacher_forward=teacher['peak'])
    text = (
        f'distillation step {mib(distill["peak"])}, student step {mib(alone["peak"])}, '
        f'teacher forward {mib(teacher["peak"])}'
    )
    bound = alone['peak'] * (1 + MEMORY_SLACK) + teacher['peak']
    ok = distill['peak'] <= bound
    return Check(
        'peak memory',
        method,
        'pass' if ok else 'fail',
        text + f' (fp16; bound: student x{1 + MEMORY_SLACK:g} + teacher = {mib(int(bound))})',
        numbers,
    )


def check_metrics(setup: Setup) -> Check:
    """Metrics of device tensors equal those of CPU tensors (tied scores included)."""
    from mlkd.evaluation.metrics import MultiLabelMetrics, SampleMAP
    from mlkd.evaluation.metrics.functional import (
        average_precision,
        multilabel_prf,
        sample_average_precision,
    )

    g = torch.Generator().manual_seed(0)
    n, c = max(4 * setup.batch, 64), setup.num_classes
    scores = torch.randint(0, 16, (n, c), generator=g).float() / 16  # many ties
    targets = (torch.rand(n, c, generator=g) < 0.3).float()
    targets[torch.rand(n, c, generator=g) < 0.05] = -1.0
    results: dict[str, tuple[Any, Any]] = {}
    for name, make in (
        (
            'MultiLabelMetrics',
            lambda: MultiLabelMetrics(conventions=('threshold', 'topk', 'oracle_topk'), topk=3),
        ),
        ('SampleMAP', SampleMAP),
    ):
        values = []
        for device in ('cpu', setup.device):
            metric = make()
            metric.process(
                None,
                [
                    dict(pred_score=s.to(device), gt_score=t.to(device))
                    for s, t in zip(scores, targets)
                ],
            )
            values.append(metric.compute_metrics(metric.results))
        results[name] = tuple(values)
    for tie in ('grouped', 'stable_sort'):
        results[f'AP {tie}'] = tuple(
            average_precision(scores.to(d), targets.to(d), tie_policy=tie).cpu()
            for d in ('cpu', setup.device)
        )
        results[f'sample AP {tie}'] = tuple(
            sample_average_precision(scores.to(d), targets.to(d), tie_policy=tie).cpu()
            for d in ('cpu', setup.device)
        )
    for convention in ('threshold', 'topk', 'oracle_topk'):
        results[f'P/R/F1 {convention}'] = tuple(
            multilabel_prf(scores.to(d), targets.to(d), convention) for d in ('cpu', setup.device)
        )
    worst = 0.0
    for reference, value in results.values():
        if isinstance(reference, dict):
            reference, value = (torch.tensor([r[k] for k in sorted(r)]) for r in (reference, value))
        both_nan = torch.isnan(reference) & torch.isnan(value)
        diff = (reference.double() - value.double()).abs()
        worst = max(worst, float(torch.where(both_nan, 0.0, diff).nan_to_num(math.inf).max()))
    ok = worst <= 1e-9
    where = (
        'CPU against CPU: run on CUDA to compare devices' if setup.device == 'cpu' else setup.device
    )
    return Check(
        'metrics on device',
        '',
        'pass' if ok else 'fail',
        f'{len(results)} results (MultiLabelMetrics, SampleMAP, AP, sample AP, P/R/F1; N={n}, '
        f'tied scores), max |device - CPU| {worst:.1e} ({where})',
        dict(max_abs_diff=worst),
    )


# ------------------------------------------------------------------------------------------ DDP


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _ddp_step(setup: Setup, method: str, data: dict, device: str, distributed: bool) -> dict:
    """One SGD (lr 1) step; returns the logged losses and the weight update (minus the grad)."""
    from mmengine.model import MMDistributedDataParallel

    model = setup.build(method, device=device)
    if device.startswith('cuda') and distributed:
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    _fix_randomness(model, batch_norm=not device.startswith('cuda'))
    before = weights(model)
    wrapper = setup.wrapper(model, amp=False, optimizer=dict(optimizer=dict(type='SGD', lr=1.0)))
    runner_model = model
    if distributed:
        runner_model = MMDistributedDataParallel(
            module=model,
            device_ids=[torch.cuda.current_device()] if device.startswith('cuda') else None,
            broadcast_buffers=False,
        )
    torch.manual_seed(1)
    log_vars = runner_model.train_step(data, wrapper)
    after = weights(model)
    gathered = [name for name, on in model.loss_router.gathers.items() if on]
    return dict(
        losses={k: float(v.detach()) for k, v in log_vars.items()},
        # The terms of the losses the router all-gathers (their value is the global batch's).
        global_keys=[
            k
            for k in log_vars
            if any(k == f'loss_{n}' or k.startswith(f'loss_{n}_') for n in gathered)
        ],
        update={k: (after[k] - before[k]).cpu() for k in before},
    )


def _fix_randomness(model, batch_norm: bool) -> None:
    """Dropout off (the ML-Decoder's: its masks depend on how the batch is split), and with
    ``batch_norm`` the BN layers on their running statistics (CPU: gloo has no SyncBN). Nothing
    calls ``train()`` again before the step."""
    fixed = (torch.nn.modules.dropout._DropoutNd, torch.nn.MultiheadAttention)
    if batch_norm:
        fixed += (torch.nn.modules.batchnorm._BatchNorm,)
    for module in model.modules():
        if isinstance(module, fixed):
            module.eval()


def _half(data: dict, rank: int, world_size: int) -> dict:
    size = len(data['inputs']) // world_size
    part = slice(rank * size, (rank + 1) * size)
    return dict(inputs=data['inputs'][part], data_samples=data['data_samples'][part])


def _ddp_worker(rank: int, world_size: int, port: int, setup_args: dict, out_dir: str) -> None:
    """One rank of the DDP check: its share of the batch, every method, results to
    ``rank<r>.pt``."""
    import mlkd

    mlkd.register_all_modules()
    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))
    cuda = setup_args['device'].startswith('cuda')
    if cuda:
        torch.cuda.set_device(rank)
    else:
        torch.set_num_threads(1)
    dist.init_process_group('nccl' if cuda else 'gloo', rank=rank, world_size=world_size)
    try:
        with ieee_fp32():
            setup = Setup(**setup_args)
            device = f'cuda:{rank}' if cuda else 'cpu'
            data = _half(setup.batch_data(), rank, world_size)
            out = {m: _ddp_step(setup, m, data, device, True) for m in setup.methods}
        torch.save(out, os.path.join(out_dir, f'rank{rank}.pt'))
    finally:
        dist.destroy_process_group()


def check_ddp(setup: Setup, world_size: int, reference: dict) -> Check:
    """``world_size`` DDP processes against the one-process ``reference`` (per method)."""
    import torch.multiprocessing as mp

    cuda = setup.device.startswith('cuda')
    backend = 'nccl' if cuda else 'gloo'
    name = f'DDP {world_size} process{"es" if world_size > 1 else ""}'
    if cuda and torch.cuda.device_count() < world_size:
        return Check(name, '', 'skip', f'{torch.cuda.device_count()} GPU(s); needs {world_size}')
    args = {k: v for k, v in asdict(setup).items() if k in Setup.__dataclass_fields__}
    with tempfile.TemporaryDirectory() as out_dir:
        start = time.perf_counter()
        mp.start_processes(
            _ddp_worker,
            args=(world_size, free_port(), args, out_dir),
            nprocs=world_size,
            join=True,
            # fork keeps the imported modules (fast); CUDA cannot be forked once initialised.
            start_method='spawn' if cuda else 'fork',
        )
        seconds = time.perf_counter() - start
        ranks = [
            torch.load(os.path.join(out_dir, f'rank{r}.pt'), weights_only=True)
            for r in range(world_size)
        ]
    worst_loss, worst_update, gathered = 0.0, 0.0, []
    for method, single in reference.items():
        for key, value in single['losses'].items():
            per_rank = [r[method]['losses'][key] for r in ranks]
            scale = max(abs(value), 1e-6)
            if key in single['global_keys']:  # every rank sees the global batch
                gathered.append(f'{method}:{key}')
                diff = max(abs(v - value) for v in per_rank) / scale
            else:  # a per-rank value; their mean is the global batch's
                diff = abs(sum(per_rank) / world_size - value) / scale
            worst_loss = max(worst_loss, diff)
        update = {k: torch.stack([r[method]['update'][k] for r in ranks]) for k in single['update']}
        # DDP averages the gradients: every rank applies the same update.
        same = all(torch.equal(u[0], u[-1]) for u in update.values())
        worst_update = max(
            worst_update,
            _worst(relative_differences({k: u[0] for k, u in update.items()}, single['update']))[1],
            0.0 if same else math.inf,
        )
    ok = worst_loss <= DDP_RTOL and worst_update <= DDP_RTOL
    bn = 'SyncBN' if cuda else 'BN on running statistics'
    return Check(
        name,
        ' '.join(reference),
        'pass' if ok else 'fail',
        f'{backend}, {bn}: losses max rel. diff {worst_loss:.1e} ({len(gathered)} global-batch '
        'terms on every rank, the others as the mean over ranks), weight updates max rel. diff '
        f'{worst_update:.1e} (tol {DDP_RTOL:g}); {seconds:.1f} s',
        dict(
            backend=backend,
            loss_rel_diff=worst_loss,
            update_rel_diff=worst_update,
            global_terms=sorted(gathered),
            seconds=seconds,
        ),
    )


# ---------------------------------------------------------------------------------------- runner


def run_checks(setup: Setup, progress: Callable[[str], None] = print) -> list[Check]:
    """Every check on ``setup`` (fp32 without TF32, :func:`ieee_fp32`); ``progress`` is told
    what runs."""
    with ieee_fp32():
        return _run_checks(setup, progress)


def _run_checks(setup: Setup, progress: Callable[[str], None]) -> list[Check]:
    data = setup.batch_data()
    checks: list[Check] = []
    with tempfile.TemporaryDirectory() as cache_root:
        for method in setup.methods:
            progress(f'{method}: fp16 step, overflow')
            checks += check_fp16_step(setup, method, data)
            progress(f'{method}: teacher cache')
            checks.append(check_teacher_cache(setup, method, data, cache_root))
            progress(f'{method}: channels-last')
            checks.append(check_channels_last(setup, method, data))
            progress(f'{method}: peak memory')
            checks.append(check_peak_memory(setup, method, data))
    progress('metrics on device')
    checks.append(check_metrics(setup))
    progress('DDP: one process on the whole batch (reference)')
    device = 'cuda:0' if setup.device.startswith('cuda') else 'cpu'
    reference = {m: _ddp_step(setup, m, data, device, False) for m in setup.methods}
    for world_size in sorted({1, setup.processes}):
        progress(f'DDP: {world_size} process(es)')
        checks.append(check_ddp(setup, world_size, reference))
    return checks
