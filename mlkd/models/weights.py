"""Where checkpoints are found and how their weights are matched to a network, strictly.

The one place that knows mlkd's state-dict layouts: a distiller checkpoint stores its student
under :data:`STUDENT_PREFIX` (and its teacher under ``teacher.``), a ``ClassifierWithLosses``
checkpoint (a classifier trained with extra losses, e.g. the intra-class contrastive teacher) its
network under :data:`CLASSIFIER_PREFIX` next to the losses' state, DDP wrappers add ``module.``.
"""

from __future__ import annotations

import glob
import os.path as osp
import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping

import torch
from mmengine.logging import MMLogger
from mmengine.runner.checkpoint import CheckpointLoader
from torch import nn

#: State-dict prefix of a distiller's student (what ``tools/export_student.py`` extracts).
STUDENT_PREFIX = 'student.'
#: State-dict prefix of the network of a ``ClassifierWithLosses`` (its losses' state, such as a
#: per-class cache, sits beside it and is not part of the network).
CLASSIFIER_PREFIX = 'classifier.'


def resolve_checkpoint(path: str, role: str = 'checkpoint') -> str:
    """A checkpoint file, or the last checkpoint of a work dir.

    A directory resolves to the file named in its ``last_checkpoint`` (written by mmengine's
    ``CheckpointHook``), else to its ``epoch_N.pth`` / ``iter_N.pth`` with the largest N, so configs
    name a teacher's work dir instead of hard-coding the epoch its schedule ends at.

    Raises:
        FileNotFoundError: naming ``role`` and the path when nothing is found.
    """
    if osp.isdir(path):
        pointer = osp.join(path, 'last_checkpoint')
        if osp.isfile(pointer):
            with open(pointer, encoding='utf-8') as f:
                named = f.read().strip()
            for candidate in (named, osp.join(path, osp.basename(named))):
                if candidate and osp.isfile(candidate):
                    return candidate
        numbered = [
            (int(m.group(2)), f)
            for f in glob.glob(osp.join(path, '*_*.pth'))
            if (m := re.fullmatch(r'(epoch|iter)_(\d+)\.pth', osp.basename(f)))
        ]
        if numbered:
            return max(numbered)[1]
        raise FileNotFoundError(
            f'{role}: work dir {path!r} holds no checkpoint (no '
            'last_checkpoint, epoch_N.pth or iter_N.pth); train it first'
        )
    if '://' not in path and not osp.isfile(path):
        raise FileNotFoundError(f'{role}: checkpoint file not found: {path!r}')
    return path


def non_finite_keys(
    named: Iterable[tuple[str, torch.Tensor]] | Mapping[str, torch.Tensor],
) -> list[str]:
    """Names of the floating-point tensors that hold a NaN or an inf (one device sync in all)."""
    items = named.items() if isinstance(named, Mapping) else named
    tensors = [(k, v) for k, v in items if isinstance(v, torch.Tensor) and v.is_floating_point()]
    if not tensors:
        return []
    finite = torch.stack([torch.isfinite(v).all().to('cpu') for _, v in tensors])
    return [k for (k, _), ok in zip(tensors, finite.tolist()) if not ok]


def show_keys(keys: list[str], limit: int = 10) -> str:
    """The first ``limit`` keys, and how many there are in all when that is more."""
    return f'{keys[:limit]}' + (f' ... ({len(keys)} in all)' if len(keys) > limit else '')


def network_state(state: Mapping[str, torch.Tensor]) -> OrderedDict:
    """The weights of one classifier in ``state``: ``module.`` stripped, a distiller's student,
    a ``ClassifierWithLosses``' classifier (without its losses' state)."""
    state = OrderedDict((re.sub(r'^module\.', '', k), v) for k, v in state.items())
    for prefix in (STUDENT_PREFIX, CLASSIFIER_PREFIX):
        if any(k.startswith(prefix) for k in state):
            return OrderedDict(
                (k[len(prefix) :], v) for k, v in state.items() if k.startswith(prefix)
            )
    return state


def load_state_strictly(
    net: nn.Module, state: Mapping[str, torch.Tensor], source: str, role: str
) -> None:
    """``net.load_state_dict(state, strict=True)`` that lists every misfit before failing.

    Raises:
        ValueError: naming ``role`` and ``source`` with the missing, unexpected and
            shape-mismatched keys (the first ten of each).
    """
    own = net.state_dict()
    wrong_shape = [
        f'{k}: checkpoint {tuple(v.shape)} vs {role} {tuple(own[k].shape)}'
        for k, v in state.items()
        if k in own and own[k].shape != v.shape
    ]
    missing = [k for k in own if k not in state]
    unexpected = [k for k in state if k not in own]
    if wrong_shape or missing or unexpected:
        raise ValueError(
            f'{source!r} does not fit the {role} model:'
            + (f'\n  missing keys: {show_keys(missing)}' if missing else '')
            + (f'\n  unexpected keys: {show_keys(unexpected)}' if unexpected else '')
            + (f'\n  shape mismatches: {show_keys(wrong_shape)}' if wrong_shape else '')
        )
    net.load_state_dict(state, strict=True)


def load_network_checkpoint(net: nn.Module, path: str, role: str) -> dict:
    """Load a classifier's weights strictly from an mlkd, mmpretrain or distiller checkpoint.

    ``path`` may be a work dir (its last checkpoint). A distiller checkpoint contributes its
    student (a distilled student reused as a teacher). Returns the loaded checkpoint.
    """
    path = resolve_checkpoint(path, role)
    checkpoint = CheckpointLoader.load_checkpoint(path, map_location='cpu')
    state = checkpoint.get('state_dict', checkpoint) if isinstance(checkpoint, dict) else None
    if not isinstance(state, dict):
        raise ValueError(f'{role}: checkpoint {path!r} holds no state_dict')
    state = network_state(state)
    bad = non_finite_keys(state)
    if bad:
        raise ValueError(
            f'{role}: checkpoint {path!r} holds NaN or infinite weights in '
            f'{show_keys(bad)}; it comes from a diverged run and would make every '
            'loss NaN'
        )
    load_state_strictly(net, state, path, role)
    MMLogger.get_current_instance().info(
        f'Loaded {role} weights from {path} ({len(state)} tensors, strict)'
    )
    return checkpoint
