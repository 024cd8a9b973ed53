"""Pretrained weights shipped inside the package, checked by sha256 before they are used.

The MultiDigits demo starts its teacher and student backbones from a pretraining on MultiGlyphs
(``configs/pretrain/``, ``docs/demo.md``), as the papers start theirs from ImageNet. The weights
are small and live in ``mlkd/weights/`` beside ``manifest.json``, which records for each file its
sha256, its size, the config that produced it and the command that rebuilds it bit for bit. A
network names them in its config::

    backbone=dict(..., zero_init_residual=False,
                  init_cfg=dict(type='BundledPretrained', name='multiglyphs_student_backbone'))

``zero_init_residual=False`` because mmpretrain's ResNet zeroes its residual BNs *after* any
initializer that is not called ``Pretrained``; :class:`BundledPretrained` refuses a module that
would do so.
"""

from __future__ import annotations

import hashlib
import json
import os.path as osp

import torch
from mmengine.model.weight_init import BaseInit, update_init_info
from torch import nn

from mlkd.registry import WEIGHT_INITIALIZERS

from .weights import load_state_strictly, non_finite_keys, show_keys

__all__ = [
    'BUNDLED_DIR',
    'BundledPretrained',
    'bundled_manifest',
    'bundled_weights_path',
    'file_sha256',
]

#: Folder of the shipped weights and their manifest.
BUNDLED_DIR = osp.join(osp.dirname(osp.dirname(osp.abspath(__file__))), 'weights')
MANIFEST = 'manifest.json'


def file_sha256(path: str) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()


def bundled_manifest(folder: str = BUNDLED_DIR) -> dict[str, dict]:
    """``{name: {'file', 'sha256', 'bytes', 'config', 'command'}}`` of ``folder/manifest.json``."""
    path = osp.join(folder, MANIFEST)
    if not osp.isfile(path):
        raise FileNotFoundError(f'bundled weights: no manifest at {path!r}')
    with open(path, encoding='utf-8') as f:
        return json.load(f)


def bundled_weights_path(name: str, folder: str = BUNDLED_DIR) -> str:
    """The file of the bundled weights ``name``, after checking its sha256 against the manifest.

    Raises:
        KeyError: ``name`` is not in the manifest (the known names are listed).
        FileNotFoundError / ValueError: the file is missing or its bytes are not the recorded
            ones; both name the command that rebuilds it.
    """
    manifest = bundled_manifest(folder)
    if name not in manifest:
        raise KeyError(
            f'bundled weights: unknown name {name!r}; {osp.join(folder, MANIFEST)} '
            f'lists {sorted(manifest)}'
        )
    entry = manifest[name]
    path = osp.join(folder, entry['file'])
    if not osp.isfile(path):
        raise FileNotFoundError(
            f'bundled weights {name!r}: {path!r} is missing; rebuild it with `{entry["command"]}`'
        )
    digest = file_sha256(path)
    if digest != entry['sha256']:
        raise ValueError(
            f'bundled weights {name!r}: {path!r} has sha256 {digest}, the manifest '
            f'records {entry["sha256"]}; restore the file (git checkout) or rebuild '
            f'it with `{entry["command"]}`'
        )
    return path


@WEIGHT_INITIALIZERS.register_module()
class BundledPretrained(BaseInit):
    """Load bundled weights (``mlkd/weights``) into a module, strictly, after a sha256 check.

    Args:
        name: the weights' name in ``mlkd/weights/manifest.json``.
    """

    def __init__(self, name: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.name = name

    def __call__(self, module: nn.Module) -> None:
        if getattr(module, 'zero_init_residual', False):
            raise ValueError(
                f'BundledPretrained({self.name!r}): {type(module).__name__} has '
                'zero_init_residual=True, which would zero the loaded residual BNs '
                'after this initializer; set zero_init_residual=False beside init_cfg'
            )
        path = bundled_weights_path(self.name)
        state = torch.load(path, map_location='cpu', weights_only=True)
        bad = non_finite_keys(state)
        if bad:
            raise ValueError(
                f'bundled weights {path!r} hold NaN or infinite values in {show_keys(bad)}'
            )
        load_state_strictly(module, state, path, f'{type(module).__name__} (BundledPretrained)')
        if hasattr(module, '_params_init_info'):
            update_init_info(module, init_info=self._get_init_info())

    def _get_init_info(self) -> str:
        return f'{self.__class__.__name__}: {self.name}'
