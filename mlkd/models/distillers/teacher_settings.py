"""The per-teacher settings of a distiller config, whatever its type: which teachers it reads, and
setting one teacher's checkpoint, cache or random start (what tools and benchmarks rewire), and one
config that reads every output of a teacher that several configs read (what a shared teacher cache
is written with).

A :class:`SingleTeacherDistiller` config has one teacher, named ``'teacher'``
(``model.teacher_ckpt``, ``model.teacher_cache``, ``model.allow_random_teacher``); a
:class:`MultiTeacherDistiller` config one per entry of ``model.teachers``
(``model.teachers.<name>.ckpt`` / ``.cache`` / ``.allow_random``). The names are those of the
built distiller's ``teacher_sources``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, MutableMapping
from typing import Any

__all__ = [
    'DISTILLER_TYPES',
    'is_distiller_config',
    'reading_every_output',
    'set_teacher',
    'teacher_names',
]

#: The registered distillers, by the ``type`` their configs name.
DISTILLER_TYPES = ('SingleTeacherDistiller', 'MultiTeacherDistiller')
#: What reads a teacher's outputs: the keys of a single-teacher config, or of a multi-teacher
#: config's entry of that teacher, holding name -> config (loss, connector, module path).
READER_KEYS = ('distill_losses', 'connectors', 'teacher_taps', 'student_taps')
#: A single-teacher config's key for each per-teacher setting of a multi-teacher entry.
SINGLE_TEACHER_KEYS = {
    'ckpt': 'teacher_ckpt',
    'cache': 'teacher_cache',
    'allow_random': 'allow_random_teacher',
}


def is_distiller_config(model_cfg: Mapping) -> bool:
    """Whether a model config is one of mlkd's distillers (it reads frozen teachers)."""
    return model_cfg.get('type') in DISTILLER_TYPES


def teacher_names(model_cfg: Mapping) -> list[str]:
    """The names of a distiller config's teachers (``[]`` for any other model)."""
    if model_cfg.get('type') == 'MultiTeacherDistiller':
        return list(model_cfg.get('teachers') or {})
    return ['teacher'] if is_distiller_config(model_cfg) else []


def set_teacher(model_cfg: MutableMapping, name: str, **settings: Any) -> None:
    """Set ``ckpt``, ``cache`` and / or ``allow_random`` of teacher ``name`` in ``model_cfg``.

    Raises:
        KeyError: ``name`` is not a teacher of the config, or a setting is unknown.
    """
    unknown = sorted(set(settings) - set(SINGLE_TEACHER_KEYS))
    if unknown:
        raise KeyError(f'unknown teacher settings {unknown}; known: {list(SINGLE_TEACHER_KEYS)}')
    entry = _teacher_entry(model_cfg, name)
    if entry is model_cfg:
        for key, value in settings.items():
            model_cfg[SINGLE_TEACHER_KEYS[key]] = value
    else:  # a ConfigDict entry merges a cache dict into the one it has (its dtype stays)
        entry.update(settings)


def reading_every_output(model_cfgs: Mapping[str, Mapping], teacher: str) -> dict:
    """One distiller config whose teacher ``teacher`` gives every output that any of
    ``model_cfgs`` (a label, e.g. a stage name -> distiller config) reads from it: the first
    config, with every config's losses of that teacher (renamed ``<label>_<loss>``, so two
    configs' losses never clash), connectors and taps. A teacher cache written with it holds what
    each of them reads (a cache stores the teacher outputs its writer's losses and connectors
    read), and it is never trained: its losses' weights do not matter.

    Raises:
        ValueError: two configs give one connector or tap name two different settings (naming
            both labels).
    """
    merged = copy.deepcopy(dict(next(iter(model_cfgs.values()))))
    entries = {label: _teacher_entry(cfg, teacher) for label, cfg in model_cfgs.items()}
    target = _teacher_entry(merged, teacher)
    target['distill_losses'] = {
        f'{label}_{name}': copy.deepcopy(loss)
        for label, entry in entries.items()
        for name, loss in (entry.get('distill_losses') or {}).items()
    }
    for key in READER_KEYS[1:]:
        target[key] = _union(key, {label: entry.get(key) for label, entry in entries.items()})
    if merged.get('type') == 'MultiTeacherDistiller':
        # The student taps that every teacher's losses share.
        merged['student_taps'] = _union(
            'student_taps', {label: cfg.get('student_taps') for label, cfg in model_cfgs.items()}
        )
    return merged


def _teacher_entry(model_cfg: MutableMapping, name: str) -> MutableMapping:
    """The mapping holding teacher ``name``'s :data:`READER_KEYS`."""
    if name not in teacher_names(model_cfg):
        raise KeyError(
            f'the {model_cfg.get("type")} config has no teacher {name!r} '
            f'(its teachers: {teacher_names(model_cfg)})'
        )
    if model_cfg['type'] == 'MultiTeacherDistiller':
        return model_cfg['teachers'][name]
    return model_cfg


def _union(key: str, by_label: Mapping[str, Mapping | None]) -> dict:
    """The entries of every label's ``key`` mapping; one name must not get two settings."""
    union: dict = {}
    owner: dict = {}
    for label, entries in by_label.items():
        for name, value in (entries or {}).items():
            if name in union and union[name] != value:
                raise ValueError(
                    f'{key}.{name} is {union[name]!r} in {owner[name]} but {value!r} in {label}: '
                    'one config cannot read both'
                )
            union.setdefault(name, copy.deepcopy(value))
            owner.setdefault(name, label)
    return union
