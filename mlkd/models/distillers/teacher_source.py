"""Where a distiller's teacher outputs come from: the live network, or a teacher cache.

A distiller asks its :class:`TeacherSource` for the teacher's outputs of a training batch and never
looks at how they are made. Three sources share that one call:

* :class:`LiveTeacher` runs the frozen network (``no_grad``, eval mode);
* :class:`CachingTeacher` runs it and stores the outputs in a cache (``mode='write'``);
* :class:`CachedTeacher` reads them from a cache (``mode='read'``) without running the network,
  bit-identical to the live teacher (:mod:`mlkd.teacher_cache`).

:func:`build_teacher_source` picks one from a ``teacher_cache`` config. A distiller with several
teachers holds one source per teacher, each with its own cache folder; the cache's fingerprint
covers each source's own network and input view (:func:`mlkd.teacher_cache.run_fingerprint`), and
:class:`~mlkd.engine.hooks.TeacherCacheHook` drives every source that has a cache (a distiller
lists them in ``teacher_sources``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch import nn

from mlkd.models.algorithms.base import sample_indices
from mlkd.teacher_cache import TeacherOutputCache

#: The live forward of a teacher: preprocessed batch inputs -> {output name: tensor}.
TeacherForward = Callable[[Any], Mapping[str, Any]]


class TeacherSource:
    """The outputs of one frozen teacher for a training batch (see the module doc).

    Args:
        network: the frozen teacher network (what a cache fingerprints; never trained here).
        forward: runs the teacher on preprocessed batch inputs under ``no_grad`` and returns its
            outputs by name (``t_logits``, ``t_<tap>``...): what the losses read.
        output_names: the names ``forward`` returns: what a cache stores.
        view: index of the batch view the teacher reads (multi-view batches), or ``None``.
        tap_paths: output name -> the module path it is recorded at (``t_stage3`` ->
            ``'backbone.layer3'``), which a cache records and checks: a tap re-pointed to
            another module of the same shape is another output.
    """

    #: The cache this source writes or reads (``None``: the live teacher only).
    cache: TeacherOutputCache | None = None

    def __init__(
        self,
        network: nn.Module,
        forward: TeacherForward,
        output_names: Sequence[str],
        view: int | None = None,
        tap_paths: Mapping[str, str] | None = None,
    ) -> None:
        self.network = network
        self.forward = forward
        self.output_names = list(output_names)
        self.view = view
        self.tap_paths = dict(tap_paths or {})

    def __call__(self, inputs: Any, data_samples: Sequence) -> dict[str, Any]:
        """The teacher's outputs (``name -> [B, ...]``) for a preprocessed batch."""
        raise NotImplementedError

    def __repr__(self) -> str:
        cache = '' if self.cache is None else f', cache={self.cache!r}'
        return f'{type(self).__name__}({type(self.network).__name__}{cache})'


class LiveTeacher(TeacherSource):
    """Runs the teacher network on every batch."""

    def __call__(self, inputs: Any, data_samples: Sequence) -> dict[str, Any]:
        return dict(self.forward(inputs))


class CachingTeacher(LiveTeacher):
    """Runs the teacher network and stores its outputs, keyed by sample index, in ``cache``."""

    def __init__(self, *args: Any, cache: TeacherOutputCache, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cache = cache

    def __call__(self, inputs: Any, data_samples: Sequence) -> dict[str, Any]:
        outputs = super().__call__(inputs, data_samples)
        self.cache.store(sample_indices(data_samples, torch.device('cpu')), outputs)
        return outputs


class CachedTeacher(TeacherSource):
    """Serves the teacher's outputs from ``cache`` (on the network's device) without running it."""

    def __init__(self, *args: Any, cache: TeacherOutputCache, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cache = cache

    def __call__(self, inputs: Any, data_samples: Sequence) -> dict[str, Any]:
        device = next(self.network.parameters()).device
        return self.cache.load(sample_indices(data_samples, torch.device('cpu')), device)


def build_teacher_source(
    cache_cfg: Mapping | TeacherOutputCache | None,
    network: nn.Module,
    forward: TeacherForward,
    output_names: Sequence[str],
    view: int | None = None,
    tap_paths: Mapping[str, str] | None = None,
) -> TeacherSource:
    """The source a ``teacher_cache`` config asks for: :class:`LiveTeacher` without a cache,
    :class:`CachingTeacher` for ``mode='write'``, :class:`CachedTeacher` for ``mode='read'``.

    Args:
        cache_cfg: ``None``, ``dict(dir=..., mode=..., dtype=...)``
            (:meth:`TeacherOutputCache.from_config`), or a cache already built from it.
        network, forward, output_names, view, tap_paths: see :class:`TeacherSource`.
    """
    cache = (
        cache_cfg
        if isinstance(cache_cfg, TeacherOutputCache)
        else TeacherOutputCache.from_config(cache_cfg)
    )
    args = (network, forward, output_names, view, tap_paths)
    if cache is None:
        return LiveTeacher(*args)
    kind = CachingTeacher if cache.mode == 'write' else CachedTeacher
    return kind(*args, cache=cache)
