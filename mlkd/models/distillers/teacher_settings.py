"""The per-teacher settings of a distiller config, whatever its type: which teachers it reads, and
setting one teacher's checkpoint, cache or random start (what tools and benchmarks rewire).

A :class:`SingleTeacherDistiller` config has one teacher, named ``'teacher'``
(``model.teacher_ckpt``, ``model.teacher_cache``, ``model.allow_random_teacher``); a
:class:`MultiTeacherDistiller` config one per entry of ``model.teachers``
(``model.teachers.<name>.ckpt`` / ``.cache`` / ``.allow_random``). The names are those of the
built distiller's ``teacher_sources``.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

__all__ = ['DISTILLER_TYPES', 'is_distiller_config', 'set_teacher', 'teacher_names']

#: The registered distillers, by the ``type`` their configs name.
DISTILLER_TYPES = ('SingleTeacherDistiller', 'MultiTeacherDistiller')
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
    if name not in teacher_names(model_cfg):
        raise KeyError(
            f'the {model_cfg.get("type")} config has no teacher {name!r} '
            f'(its teachers: {teacher_names(model_cfg)})'
        )
    if model_cfg['type'] == 'MultiTeacherDistiller':
        model_cfg['teachers'][name].update(settings)
    else:
        for key, value in settings.items():
            model_cfg[SINGLE_TEACHER_KEYS[key]] = value
