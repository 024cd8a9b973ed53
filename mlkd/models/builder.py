"""Build a classifier from a model dict, a config path, or a config path with overrides."""

from __future__ import annotations

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
    if isinstance(cfg, str):
        cfg = dict(cfg_path=cfg)
    if isinstance(cfg, dict) and 'cfg_path' in cfg:
        overrides = {k: v for k, v in cfg.items() if k != 'cfg_path'}
        base = Config.fromfile(cfg['cfg_path'])
        if 'model' not in base:
            raise ValueError(f'{role}: config {cfg["cfg_path"]!r} defines no `model`')
        base.merge_from_dict({f'model.{k}': v for k, v in _flatten(overrides).items()})
        cfg = base.model
    if not isinstance(cfg, dict) or 'type' not in cfg:
        raise TypeError(
            f'{role} must be a model config dict with a `type`, a config path, or '
            f'dict(cfg_path=...), got {cfg!r}'
        )
    return MODELS.build(cfg)


def _flatten(overrides: dict, prefix: str = '') -> dict:
    """``{'head': {'num_classes': 3}}`` -> ``{'head.num_classes': 3}``; ``_delete_`` kept whole."""
    flat = {}
    for key, value in overrides.items():
        if isinstance(value, dict) and value and not value.get('_delete_'):
            flat.update(_flatten(value, f'{prefix}{key}.'))
        else:
            flat[f'{prefix}{key}'] = value
    return flat
