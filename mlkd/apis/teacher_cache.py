"""Fill a teacher-output cache for a distillation config without training a student.

Runs the config's training data loader epoch by epoch (its sampler, seed, batch size and
pipeline, so each batch is the one a training run would see) and only the teacher's forward pass
(``torch.inference_mode``), storing the outputs the config's losses read, keyed by (seed, epoch,
sample index) (:mod:`mlkd.teacher_cache`). Epochs already in the cache are
skipped, so asking for more epochs extends a cache. A training run reads it bit-identically when
the teacher forward is the same: the same device and precision (``amp`` must match the run's
``--amp``; the manifest records it and a mismatch is refused). ``channels_last`` is faster on
GPUs but gives other kernels and other rounding, so its cache is readable only by a run that
also records channels-last (refused otherwise); it is offered for measuring.

``tools/cache_teacher.py`` is the command line of :func:`fill_teacher_cache`.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable, Sequence

import torch
from mmengine.config import Config
from mmengine.registry import init_default_scope
from mmengine.runner import set_random_seed

from mlkd.engine.runner import MLKDRunner
from mlkd.models.algorithms.base import sample_indices
from mlkd.models.distillers.teacher_settings import set_teacher, teacher_names
from mlkd.models.distillers.teacher_source import TeacherSource
from mlkd.registry import MODELS
from mlkd.teacher_cache import (
    TeacherCacheError,
    TeacherOutputCache,
    run_fingerprint,
    teacher_precision,
    train_sampler,
)

__all__ = ['AMP_DTYPES', 'TeacherCacheWriter', 'fill_teacher_cache']

#: ``amp`` names -> autocast dtype of the teacher forward.
AMP_DTYPES = {'float16': torch.float16, 'bfloat16': torch.bfloat16}


class TeacherCacheWriter:
    """The forward of one teacher of a distiller over its training loader, epoch by epoch, into
    a cache.

    Args:
        model: the distiller (train mode; only the teacher runs).
        loader: the training data loader (an ``EpochKeyedSampler``); ``None`` to call
            :meth:`write_batch` only.
        cache: a :class:`TeacherOutputCache` in ``'write'`` mode.
        device: where the teacher runs.
        amp_dtype: autocast dtype of the teacher forward, or ``None`` (fp32).
        channels_last: channels-last teacher and inputs.
        source: the teacher (its :class:`TeacherSource`: network and forward); default the
            distiller's only one.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        loader: torch.utils.data.DataLoader | None,
        cache: TeacherOutputCache,
        device: str,
        amp_dtype: torch.dtype | None = None,
        channels_last: bool = False,
        source: TeacherSource | None = None,
    ) -> None:
        self.model, self.loader, self.cache = model, loader, cache
        self.device, self.amp_dtype, self.channels_last = device, amp_dtype, channels_last
        self.source = source if source is not None else model.teacher_source
        if channels_last:
            self.source.network.to(memory_format=torch.channels_last)
        self.sampler = None if loader is None else train_sampler(loader)

    def write_batch(self, batch: dict) -> int:
        """Run the teacher on one loader batch and store its outputs; returns its size."""
        device_type = torch.device(self.device).type
        with (
            torch.inference_mode(),
            torch.autocast(device_type, dtype=self.amp_dtype, enabled=self.amp_dtype is not None),
        ):
            data = self.model.data_preprocessor(batch, True)
            inputs = data['inputs']
            if self.channels_last:
                inputs = inputs.contiguous(memory_format=torch.channels_last)
            outputs = self.source.forward(inputs)
        indices = sample_indices(data['data_samples'], torch.device('cpu'))
        self.cache.store(indices, outputs)
        return len(indices)

    def write_epoch(self, epoch: int, epochs_ahead: int = 1) -> tuple[int, float]:
        """Cache one epoch; returns (rows written, seconds of the teacher forwards and writes)."""
        self.sampler.set_epoch(epoch)
        self.cache.begin_epoch(epoch, len(self.sampler), epochs_ahead)
        rows, busy = 0, 0.0
        for batch in self.loader:
            start = time.perf_counter()
            rows += self.write_batch(batch)
            busy += time.perf_counter() - start
        self.cache.end_epoch()
        return rows, busy


def fill_teacher_cache(
    cfg: Config,
    cache_dir: str,
    epochs: int | Sequence[int],
    *,
    dtype: str = 'float32',
    amp: str | None = None,
    channels_last: bool = False,
    device: str = 'cpu',
    teacher: str | None = None,
    log: Callable[[str], None] = print,
) -> TeacherOutputCache:
    """Cache the outputs of one teacher of the distillation config ``cfg`` for epochs
    ``0 .. epochs-1`` (``epochs`` an int) or for the listed epoch numbers.

    ``teacher`` names the teacher (a :class:`MultiTeacherDistiller` config's key in
    ``model.teachers``; each teacher has a cache of its own); ``None`` for a config with one.

    Epochs already in ``cache_dir`` are skipped (a cache of another setting is refused by its
    fingerprint). An epoch's outputs do not depend on the epochs written before it, so several
    processes may fill disjoint epochs of one cache at the same time (a benchmark does,
    :mod:`mlkd.apis.benchmark`).
    ``cfg`` must fix ``randomness.seed`` (the model is built after seeding with it, as the Runner
    does); the cache is keyed by the training sampler's seed, which defaults to it.

    Returns:
        the closed cache.
    """
    wanted = range(epochs) if isinstance(epochs, int) else sorted(set(epochs))
    if any(not isinstance(epoch, numbers.Integral) or epoch < 0 for epoch in wanted):
        raise ValueError(f'fill_cache: epochs must be non-negative epoch numbers, got {epochs!r}')
    init_default_scope(cfg.get('default_scope', 'mlkd'))
    seed = (cfg.get('randomness') or {}).get('seed')
    if seed is None:
        raise TeacherCacheError(
            f'{cfg.filename}: randomness.seed is None; a cache is keyed by '
            'the seed, so the config (or --cfg-options randomness.seed=S) '
            'must fix it'
        )
    # As the Runner does before building the model (a randomly initialised teacher then matches).
    set_random_seed(seed, deterministic=cfg.randomness.get('deterministic', False))
    model_cfg = cfg.model.to_dict()
    names = teacher_names(model_cfg)
    if not names:
        raise TypeError(
            f'{cfg.filename}: model type {cfg.model.get("type")!r} has no teacher '
            '(a SingleTeacherDistiller or MultiTeacherDistiller config is needed)'
        )
    if teacher is None and len(names) > 1:
        raise ValueError(
            f'{cfg.filename} has teachers {names}, each with a cache of its own: name the one to '
            'cache (--teacher NAME)'
        )
    teacher = names[0] if teacher is None else teacher
    if teacher not in names:
        raise ValueError(f'{cfg.filename} has no teacher {teacher!r}; its teachers: {names}')
    for name in names:
        set_teacher(model_cfg, name, cache=None)  # the writer drives the cache itself
    if cfg.get('data_preprocessor') is not None:  # merged into the model as the Runner does
        model_cfg.setdefault('data_preprocessor', cfg.data_preprocessor.to_dict())
    model = MODELS.build(model_cfg).to(device).train()
    source = model.teacher_sources[teacher]
    loader = MLKDRunner.build_dataloader(cfg.train_dataloader, seed=seed)
    amp_dtype = AMP_DTYPES.get(amp)
    cache = TeacherOutputCache(cache_dir, 'write', dtype)
    cache.open(
        run_fingerprint(
            model,
            loader,
            cfg.train_dataloader.dataset,
            teacher_precision(amp_dtype=amp_dtype),
            channels_last,
            source=source,
        ),
        source.output_names,
        source.tap_paths,
    )
    writer = TeacherCacheWriter(model, loader, cache, device, amp_dtype, channels_last, source)
    todo = [e for e in wanted if e not in cache.epochs_written]
    log(
        f'{cache}: caching {source.output_names} of {teacher} for epochs {todo} '
        f'({len(writer.sampler)} samples each; already written: {cache.epochs_written})'
    )
    try:
        for number, epoch in enumerate(todo):
            rows, busy = writer.write_epoch(epoch, epochs_ahead=len(todo) - number)
            log(
                f'epoch {epoch}: {rows} samples in {busy:.1f} s '
                f'({rows / max(busy, 1e-9):.1f} samples/s)'
            )
    finally:
        cache.close()
    return cache
