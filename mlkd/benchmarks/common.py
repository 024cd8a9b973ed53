"""Shared pieces of the benchmark tools: networks and distillers from the shipped configs, random
loader batches, interleaved timing, peak memory of a step, the run's environment and tables.

Every network is built from ``configs/`` (``_base_/models``, ``_base_/pairs``,
``_base_/methods``), never written by hand, so a benchmark times what a user trains.
"""

from __future__ import annotations

import copy
import functools
import json
import logging
import os
import platform
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch
from mmengine.config import Config
from mmengine.logging import MMLogger
from mmpretrain.structures import DataSample

# The teacher cache's one import site in the benchmarks (it is moving into its own package).
from mlkd.teacher_cache import TeacherOutputCache
from mlkd.utils.config_paths import resolve_config_path

#: CRD's bank size for benchmark runs (the banks are indexed, never scanned: N does not matter).
CRD_SAMPLES = 1000


def config(relative: str) -> Config:
    """``configs/<relative>`` (a source checkout's, or the installed package's copy); a copy of
    the parsed file, which the caller may change."""
    return copy.deepcopy(_parsed_config(relative))


@functools.cache
def _parsed_config(relative: str) -> Config:
    return Config.fromfile(resolve_config_path(f'mlkd::{relative}'))


def net_cfg(name: str) -> dict:
    """The model of ``configs/_base_/models/<name>_ml.py`` without its pretrained-weights init
    (nothing is downloaded for a timing run)."""
    cfg = config(f'_base_/models/{name}_ml.py').model
    cfg.backbone.pop('init_cfg', None)
    return cfg.to_dict()


def method_cfg(name: str, crd_samples: int = CRD_SAMPLES) -> dict:
    """``configs/_base_/methods/<name>.py``'s ``method`` dict, CRD with a ``crd_samples``-row
    bank."""
    method = config(f'_base_/methods/{name}.py').method.to_dict()
    if 'crd' in method.get('distill_losses', {}):
        method['distill_losses']['crd']['num_samples'] = crd_samples
    return method


def distiller_cfg(pair: str, method: str, crd_samples: int = CRD_SAMPLES) -> tuple[dict, Config]:
    """The distiller a leaf config ``_base_ = [pairs/<pair>.py, methods/<method>.py]`` with
    ``model = _base_.method`` builds, with a random teacher (``teacher_ckpt=None``,
    ``allow_random_teacher=True``) and the dataset's data preprocessor (as the runner sets it).

    Returns:
        The model dict and the pair's whole config (dataset settings: ``image_size``,
        ``num_classes``).
    """
    cfg = config(f'_base_/pairs/{pair}.py')
    cfg.merge_from_dict(dict(model=method_cfg(method, crd_samples)))
    model = cfg.model.to_dict()
    model.update(teacher_ckpt=None, allow_random_teacher=True)
    model.setdefault('data_preprocessor', cfg.data_preprocessor.to_dict())
    return model, cfg


def student_cfg(distiller: dict) -> dict:
    """The student of a distiller dict as a plain classifier, with the distiller's preprocessor
    (the "student alone" of a comparison)."""
    student = distiller['student']
    if isinstance(student, str):
        student = Config.fromfile(student).model.to_dict()
    return dict(student, data_preprocessor=distiller['data_preprocessor'])


def random_batch(size: int, image_size: int, num_classes: int, seed: int = 0) -> dict:
    """A loader batch: ``size`` random uint8 ``[3, image_size, image_size]`` images, 1-3 labels
    each, ``sample_idx`` 0..size-1 (the rows of CRD's banks and of a teacher cache)."""
    g = torch.Generator().manual_seed(seed)
    samples = []
    for index in range(size):
        labels = torch.randperm(num_classes, generator=g)[: 1 + index % 3].tolist()
        sample = DataSample().set_gt_label(labels)
        sample.set_metainfo(dict(sample_idx=index))
        samples.append(sample)
    images = [
        torch.randint(0, 256, (3, image_size, image_size), dtype=torch.uint8, generator=g)
        for _ in range(size)
    ]
    return dict(inputs=images, data_samples=samples)


def synchronize(device: str) -> None:
    if str(device).startswith('cuda'):
        torch.cuda.synchronize()


def timed_interleaved(
    steps: dict[str, Callable[[], object]],
    repeats: int,
    device: str,
    warmup: int = 2,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, float]:
    """Median seconds (of ``clock``) of each step, the steps run in turn (round-robin)
    ``warmup + repeats`` times; the first ``warmup`` rounds are not timed."""
    times: dict[str, list[float]] = {name: [] for name in steps}
    for round_idx in range(warmup + repeats):
        for name, step in steps.items():
            synchronize(device)
            start = clock()
            step()
            synchronize(device)
            if round_idx >= warmup:
                times[name].append(clock() - start)
    return {name: statistics.median(values) for name, values in times.items()}


@contextmanager
def peak_memory(device: str) -> Iterator[dict[str, int | None]]:
    """Peak memory of the block on CUDA, in bytes, in ``result['peak']`` after it: the most the
    caching allocator handed out during the block minus what was allocated when it began (what a
    step needs on top of weights and optimizer state; ``result['allocated']``). ``None`` on CPU,
    whose allocator keeps no such count (and the process's resident set keeps freed memory)."""
    result: dict[str, int | None] = dict(peak=None, allocated=None)
    if not str(device).startswith('cuda'):
        yield result
        return
    torch.cuda.synchronize()
    start = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    yield result
    torch.cuda.synchronize()
    result.update(peak=torch.cuda.max_memory_allocated() - start, allocated=start)


@contextmanager
def warnings_only() -> Iterator[None]:
    """mmengine's current logger at WARNING within the block (its INFO lines, one per optimizer
    wrapper built, would bury a benchmark's tables); its level is restored after."""
    logger = MMLogger.get_current_instance()
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def mib(nbytes: int | None) -> str:
    return 'n/a' if nbytes is None else f'{nbytes / 2**20:.0f} MiB'


def environment(device: str) -> dict[str, Any]:
    """What the numbers were measured on: device, driver / CUDA / cuDNN / torch versions, CPUs."""
    env: dict[str, Any] = dict(
        torch=torch.__version__,
        python=platform.python_version(),
        cpu=platform.processor() or platform.machine(),
        cpu_count=os.cpu_count(),
        torch_threads=torch.get_num_threads(),
    )
    try:
        import torchvision

        env['torchvision'] = torchvision.__version__
    except ImportError:
        env['torchvision'] = None
    if str(device).startswith('cuda') and torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        env.update(
            device=torch.cuda.get_device_name(0),
            device_count=torch.cuda.device_count(),
            device_memory=mib(props.total_memory),
            capability='.'.join(map(str, torch.cuda.get_device_capability(0))),
            cuda=torch.version.cuda,
            cudnn=torch.backends.cudnn.version(),
            driver=_nvidia_driver(),
        )
    else:
        env.update(device='cpu', device_count=0)
    return env


def _nvidia_driver() -> str | None:
    if shutil.which('nvidia-smi') is None:
        return None
    try:
        out = subprocess.run(
            ['nvidia-smi', '--query-gpu=driver_version', '--format=csv,noheader'],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return out.strip().splitlines()[0] if out.strip() else None


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub Markdown table (``|`` inside cells escaped)."""

    def cell(value: Any) -> str:
        return str(value).replace('|', '\\|')

    lines = ['| ' + ' | '.join(map(cell, headers)) + ' |', '|' + '---|' * len(headers)]
    lines += ['| ' + ' | '.join(map(cell, row)) + ' |' for row in rows]
    return '\n'.join(lines)


def write_json(path: str, content: Any, overwrite: bool = False) -> None:
    """Write ``content`` as indented JSON under the output policy
    (:mod:`mlkd.utils.output_policy`: an existing file is kept unless ``overwrite``; folders
    created; written atomically)."""
    from mlkd.utils.output_policy import write_text

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    write_text(path, json.dumps(content, indent=2, default=str) + '\n', overwrite=overwrite)


# ---------------------------------------------------------------------------------- teacher cache
# The benchmarks drive a distiller's teacher cache through these two functions only, so that a
# change of the cache's home or of the distiller's attribute is fixed here.


def fill_teacher_cache(distiller, data: dict, folder: str, fingerprint: dict) -> TeacherOutputCache:
    """Run ``distiller``'s live teacher on ``data`` (one loader batch) through a cache in
    ``'write'`` mode (epoch 0), and return the cache reopened for reading, epoch 0 begun.

    The distiller computes its losses once while writing (the teacher's outputs are stored as a
    side effect, as in a training run); its weights are not updated.
    """
    writer = TeacherOutputCache(folder, 'write')
    writer.open(fingerprint, distiller.teacher_outputs)
    writer.begin_epoch(0, len(data['data_samples']))
    with use_teacher_cache(distiller, writer), torch.no_grad():
        processed = distiller.data_preprocessor(data, True)
        distiller.loss(processed['inputs'], processed['data_samples'])
    writer.end_epoch()
    reader = TeacherOutputCache(folder, 'read')
    reader.open(fingerprint, distiller.teacher_outputs)
    reader.begin_epoch(0, len(data['data_samples']))
    return reader


@contextmanager
def use_teacher_cache(distiller, cache: TeacherOutputCache | None) -> Iterator[None]:
    """Let ``distiller`` take its teacher's outputs from ``cache`` within the block."""
    previous = distiller.teacher_source.cache
    distiller.serve_teacher_from(cache)
    try:
        yield
    finally:
        distiller.serve_teacher_from(previous)
