"""Build a classifier from a model dict, a config path, or a config path with overrides, and read
the taps its config declares."""

from __future__ import annotations

import copy
from collections.abc import Mapping

from mmengine.config import Config
from torch import nn

from mlkd.registry import MODELS


def build_network(cfg: dict | str, role: str) -> nn.Module:
    """Build a classifier from a model dict, a config path, or ``dict(cfg_path=..., **overrides)``.

    A config path means the ``model`` of that config (e.g. the config the teacher was trained
    with). With ``cfg_path`` the remaining keys are merged into that model recursively, so a
    config can reuse a base model and swap its head:
    ``dict(cfg_path='configs/_base_/models/resnet34_ml.py', head=dict(type='MLDecoderHead', ...))``.

    Args:
        cfg: the model, as described above.
        role: name used in error messages (``'student'``, ``'teacher'``, ``'classifier'``).
    """
    base = _network_config(cfg, role)
    if base is not None:
        cfg = base.model
    if not isinstance(cfg, dict) or 'type' not in cfg:
        raise TypeError(
            f'{role} must be a model config dict with a `type`, a config path, or '
            f'dict(cfg_path=...), got {cfg!r}'
        )
    return MODELS.build(cfg)


def network_taps(cfg: dict | str, extra: Mapping[str, str] | None, role: str) -> dict[str, str]:
    """The taps of a network: those its config declares, updated by ``extra``.

    A network config declares its taps as a top-level ``taps`` (tap name -> module path; the
    shipped model bases take them from ``configs/_base_/taps/``), so that every pair using the
    network records the same points without repeating them. A model dict declares none.

    Args:
        cfg: the network, as :func:`build_network` takes it.
        extra: taps a distillation config adds, or re-points (a name it shares with the
            declared ones takes its path from here); ``None`` adds none.
        role: name used in error messages.
    """
    base = _network_config(cfg, role)
    declared = {} if base is None else dict(base.get('taps') or {})
    return {**declared, **dict(extra or {})}


def resolved_network_config(cfg: dict | str, role: str) -> dict:
    """The model dict a network spec builds: a model dict as it is, a config path's ``model``, or
    ``dict(cfg_path=..., **overrides)``'s model with the overrides merged. What a run's identity
    must hold so that an edit of the referenced file changes it."""
    base = _network_config(cfg, role)
    return base.model.to_dict() if base is not None else cfg


#: Model keys that may name a network by config path (a distiller's student and teacher, a
#: single-network wrapper's classifier); a multi-teacher distiller's are
#: ``teachers.<name>.network``.
NETWORK_KEYS = ('student', 'teacher', 'classifier')


def with_networks_resolved(cfg: Config | Mapping) -> dict:
    """``cfg`` as a plain dict whose ``model`` networks named by config path (:data:`NETWORK_KEYS`
    and every ``model.teachers.<name>.network``) are replaced by the models they build
    (:func:`resolved_network_config`): what a run's fingerprint must cover, so that editing a
    referenced file (a student's width) changes the identity of every run built on it, not only
    of the run that is that file."""
    resolved = cfg.to_dict() if isinstance(cfg, Config) else copy.deepcopy(dict(cfg))
    model = resolved.get('model')
    if not isinstance(model, dict):
        return resolved
    places = [(model, role, role) for role in NETWORK_KEYS]
    if isinstance(model.get('teachers'), dict):
        places += [
            (entry, 'network', f'model.teachers.{name}.network')
            for name, entry in model['teachers'].items()
            if isinstance(entry, dict)
        ]
    for holder, key, role in places:
        if isinstance(holder.get(key), (str, dict)):
            holder[key] = resolved_network_config(holder[key], role)
    return resolved


def _network_config(cfg: dict | str, role: str) -> Config | None:
    """The config a network given by path (or ``dict(cfg_path=..., **overrides)``) comes from,
    its model updated by the overrides; ``None`` for a model dict."""
    if isinstance(cfg, str):
        cfg = dict(cfg_path=cfg)
    if not (isinstance(cfg, dict) and 'cfg_path' in cfg):
        return None
    overrides = {k: v for k, v in cfg.items() if k != 'cfg_path'}
    base = Config.fromfile(cfg['cfg_path'])
    if 'model' not in base:
        raise ValueError(f'{role}: config {cfg["cfg_path"]!r} defines no `model`')
    base.merge_from_dict({f'model.{k}': v for k, v in _flatten(overrides).items()})
    return base


def _flatten(overrides: dict, prefix: str = '') -> dict:
    """``{'head': {'num_classes': 3}}`` -> ``{'head.num_classes': 3}``; ``_delete_`` kept whole."""
    flat = {}
    for key, value in overrides.items():
        if isinstance(value, dict) and value and not value.get('_delete_'):
            flat.update(_flatten(value, f'{prefix}{key}.'))
        else:
            flat[f'{prefix}{key}'] = value
    return flat
