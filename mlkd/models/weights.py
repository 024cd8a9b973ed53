"""Where checkpoints are found and how their weights are matched to a network, strictly.

The one place that knows mlkd's state-dict layouts: a distiller checkpoint stores its student
under :data:`STUDENT_PREFIX` (and its teacher under ``teacher.``), a ``ClassifierWithLosses``
checkpoint (a classifier trained with extra losses, e.g. the intra-class contrastive teacher) its
network under :data:`CLASSIFIER_PREFIX` next to the losses' state, DDP wrappers add ``module.``.
Files from elsewhere are read too: a plain state dict (``torch.save(model.state_dict())``), a
``.safetensors`` file, and, with a key layout named (:mod:`mlkd.models.weight_layouts`), the state
dict of a torchvision ResNet classifier.
"""

from __future__ import annotations

import glob
import os.path as osp
import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence

import torch
from mmengine.logging import MMLogger
from mmengine.runner.checkpoint import CheckpointLoader
from torch import nn

from .weight_layouts import convert_layout, guess_layout

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

    An ``http(s)://`` URL is returned as it is (read weights-only from torch hub's cache,
    :func:`~mlkd.utils.checkpoint.load_url_checkpoint`).

    Raises:
        FileNotFoundError: naming ``role`` and the path when nothing is found.
        ValueError: another scheme (``torchvision://``...), which mmengine unpickles in full.
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
    if '://' in path and not path.startswith(('http://', 'https://')):
        raise ValueError(
            f'{role}: {path!r}: a checkpoint is a file, a work dir or an http(s) URL; mmengine '
            f'reads {path.split("://")[0]}:// paths by unpickling them in full (which runs any '
            'code in the file): give its URL or a downloaded file'
        )
    if '://' not in path and not osp.isfile(path):
        raise FileNotFoundError(f'{role}: checkpoint file not found: {path!r}')
    return path


def non_finite_keys(
    named: Iterable[tuple[str, torch.Tensor]] | Mapping[str, torch.Tensor],
) -> list[str]:
    """Names of the floating-point tensors that hold a NaN or an inf.

    It runs on every optimizer step (the gradients), so it first sums each tensor: a NaN or an
    inf anywhere makes the sum NaN or inf, so finite sums (one device sync for all) prove every
    tensor finite, about 12x faster on a CPU than an element-wise test (ResNet-50's gradients:
    11 ms against 135 ms). Only when a sum is not finite, which finite values can also give by
    overflowing, are the tensors tested element by element to name the culprits.
    """
    items = named.items() if isinstance(named, Mapping) else named
    tensors = [(k, v) for k, v in items if isinstance(v, torch.Tensor) and v.is_floating_point()]
    if not tensors:
        return []
    device = tensors[0][1].device
    with torch.no_grad():
        # float16 / bfloat16 sums in float32: fewer overflows of finite values
        totals = torch.stack(
            [
                v.sum(dtype=torch.float64 if v.dtype == torch.float64 else torch.float32).to(device)
                for _, v in tensors
            ]
        )
        if bool(totals.isfinite().all()):
            return []
        finite = torch.stack([torch.isfinite(v).all().to(device) for _, v in tensors])
    return [k for (k, _), ok in zip(tensors, finite.tolist()) if not ok]


def show_keys(keys: Sequence[str], limit: int = 10) -> str:
    """The first ``limit`` keys (or class names), and how many there are in all when that is
    more."""
    keys = [str(key) for key in keys]
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
    net: nn.Module, state: Mapping[str, torch.Tensor], source: str, role: str, hint: str = ''
) -> None:
    """``net.load_state_dict(state, strict=True)`` that lists every misfit before failing.

    Raises:
        ValueError: naming ``role`` and ``source`` with the missing, unexpected and
            shape-mismatched keys (the first ten of each), then ``hint`` if given.
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
            + (f'\n  {hint}' if hint else '')
        )
    net.load_state_dict(state, strict=True)


def read_state_dict(path: str, role: str) -> OrderedDict:
    """The tensors of a weights file, read without running code hidden in it.

    ``.safetensors`` files are read with safetensors; anything else with mmengine's loader,
    which mlkd points at ``weights_only=True`` loading for local files
    (:mod:`mlkd.utils.checkpoint`). A checkpoint dict is unwrapped (its ``state_dict``, else its
    ``model`` entry: mmengine's and torchvision's training scripts), ``module.`` is stripped.

    Raises:
        ValueError: naming ``role`` and ``path`` when the file holds no state dict, or holds NaN
            or infinite weights (naming them).
    """
    if path.endswith('.safetensors'):
        try:
            from safetensors.torch import load_file
        except ImportError as error:
            raise ImportError(
                f'{role}: {path!r} is a safetensors file: pip install safetensors'
            ) from error
        state = load_file(path, device='cpu')
    else:
        checkpoint = CheckpointLoader.load_checkpoint(path, map_location='cpu')
        state = checkpoint
        if isinstance(checkpoint, dict):
            for entry in ('state_dict', 'model'):
                if isinstance(checkpoint.get(entry), dict):
                    state = checkpoint[entry]
                    break
    if not isinstance(state, dict) or not any(isinstance(v, torch.Tensor) for v in state.values()):
        raise ValueError(f'{role}: checkpoint {path!r} holds no state_dict')
    state = OrderedDict((re.sub(r'^module\.', '', k), v) for k, v in state.items())
    bad = non_finite_keys(state)
    if bad:
        raise ValueError(
            f'{role}: checkpoint {path!r} holds NaN or infinite weights in '
            f'{show_keys(bad)}; it comes from a diverged run and would make every '
            'loss NaN'
        )
    return state


def load_network_checkpoint(net: nn.Module, source: str | Mapping, role: str) -> dict:
    """Load a classifier's weights strictly from a checkpoint or weights file.

    ``source`` is a path, or ``dict(path=PATH, layout=NAME)`` for a file whose keys follow
    another library's layout (:data:`~mlkd.models.weight_layouts.LAYOUTS`, e.g.
    ``'torchvision_resnet'``). The path may be an mlkd, mmpretrain or distiller checkpoint (a
    distiller contributes its student: a distilled student reused as a teacher), a work dir (its
    last checkpoint), a plain state dict of the whole classifier (``.pth``, ``.bin``) or a
    ``.safetensors`` file. Returns the state dict that was loaded.

    Raises:
        ValueError: the weights do not fit ``net``: the message names the file and the
            missing, unexpected and mis-shaped keys (and a layout to try when the keys look like
            one), or the source is malformed.
    """
    layout = None
    if isinstance(source, Mapping):
        unknown = set(source) - {'path', 'layout'}
        if 'path' not in source or unknown:
            raise ValueError(
                f'{role}: a checkpoint given as a dict takes path= and layout=, got '
                f'{dict(source)!r}'
            )
        path, layout = source['path'], source.get('layout')
    else:
        path = source
    path = resolve_checkpoint(path, role)
    raw = read_state_dict(path, role)
    state = network_state(raw)
    hint = ''
    if any(key.startswith(STUDENT_PREFIX) for key in raw):
        hint = (
            f'It is a distillation checkpoint: its student ("{STUDENT_PREFIX}" weights) was read, '
            'not its teacher.'
        )
    if layout is not None:
        state = convert_layout(state, layout, path)
    elif guessed := guess_layout(state):
        hint = (
            f'Its keys look like a {guessed} state dict: name that layout, '
            f'dict(path={path!r}, layout={guessed!r}).'
        )
    load_state_strictly(net, state, path, role, hint)
    MMLogger.get_current_instance().info(
        f'Loaded {role} weights from {path} ({len(state)} tensors, strict'
        + (f', {layout} layout)' if layout else ')')
    )
    return state


def checkpoint_classes(source: str | Mapping, role: str) -> tuple[str, ...] | None:
    """The class names a checkpoint's network was trained to predict, in output order: the
    ``meta.dataset_meta.classes`` that mmengine's Runner saves with every checkpoint (its training
    dataset's), or the ``meta.classes`` of ``tools/export_student.py``; ``None`` for a file
    without them (a plain state dict, ``.safetensors``).

    Args:
        source: a path, a work dir or ``dict(path=..., layout=...)`` as
            :func:`load_network_checkpoint` takes it.
        role: the network's name in messages.
    """
    path = resolve_checkpoint(source['path'] if isinstance(source, Mapping) else source, role)
    if path.endswith('.safetensors'):
        return None
    checkpoint = CheckpointLoader.load_checkpoint(path, map_location='cpu')
    meta = checkpoint.get('meta') if isinstance(checkpoint, dict) else None
    dataset_meta = meta.get('dataset_meta') if isinstance(meta, dict) else None
    classes = dataset_meta.get('classes') if isinstance(dataset_meta, dict) else None
    if not classes and isinstance(meta, dict):
        classes = meta.get('classes')
    return tuple(str(c) for c in classes) if classes else None
