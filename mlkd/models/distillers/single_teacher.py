"""One frozen teacher, one student, any number of named distillation losses."""
from __future__ import annotations

import inspect
import re
from collections import OrderedDict
from typing import Any, Sequence

import torch
from mmengine.config import Config
from mmengine.logging import MMLogger
from mmengine.model import BaseModel
from mmengine.runner.checkpoint import CheckpointLoader
from torch import nn

from mlkd.models.distillers.taps import Taps
from mlkd.models.losses.base import full_precision
from mlkd.models.utils import targets_from_samples
from mlkd.registry import MODELS

#: Taps every classifier has without configuration (mmpretrain ImageClassifier layout).
DEFAULT_TAPS = {'logits': 'head', 'feats': 'backbone', 'pooled': 'neck'}
#: Constructor arguments a loss may declare to receive facts from the shape probe.
INJECTABLE = ('num_classes', 's_shapes', 't_shapes', 's_channels', 't_channels')


def build_network(cfg: dict | str, role: str) -> nn.Module:
    """Build a classifier from a model dict, a config path, or ``dict(cfg_path=..., **overrides)``.

    A config path means the ``model`` of that config (e.g. the config the teacher was trained
    with). With ``cfg_path`` the remaining keys are merged into that model recursively, so a
    config can reuse a base model and swap its head:
    ``dict(cfg_path='configs/_base_/models/resnet34_ml.py', head=dict(type='MLDecoderHead', ...))``.
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
        raise TypeError(f'{role} must be a model config dict with a `type`, a config path, or '
                        f'dict(cfg_path=...), got {cfg!r}')
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


def load_teacher_checkpoint(teacher: nn.Module, path: str) -> dict:
    """Load ``path`` into ``teacher`` strictly; accepts mlkd, mmpretrain and distiller checkpoints.

    ``module.`` prefixes (DDP) are stripped; a distiller checkpoint contributes its ``student.``
    weights (a distilled student reused as a teacher). Any missing or unexpected key, or a shape
    mismatch, raises ``ValueError`` listing them.
    """
    checkpoint = CheckpointLoader.load_checkpoint(path, map_location='cpu')
    state = checkpoint.get('state_dict', checkpoint) if isinstance(checkpoint, dict) else None
    if not isinstance(state, dict):
        raise ValueError(f'teacher_ckpt {path!r} holds no state_dict')
    state = OrderedDict((re.sub(r'^module\.', '', k), v) for k, v in state.items())
    if any(k.startswith('student.') for k in state):
        state = OrderedDict((k[len('student.'):], v) for k, v in state.items()
                            if k.startswith('student.'))
    own = teacher.state_dict()
    wrong_shape = [f'{k}: checkpoint {tuple(v.shape)} vs teacher {tuple(own[k].shape)}'
                   for k, v in state.items() if k in own and own[k].shape != v.shape]
    missing = [k for k in own if k not in state]
    unexpected = [k for k in state if k not in own]
    if wrong_shape or missing or unexpected:
        def show(keys):
            return f'{keys[:10]}' + (f' ... ({len(keys)} in all)' if len(keys) > 10 else '')
        raise ValueError(
            f'teacher_ckpt {path!r} does not fit the teacher model:'
            + (f'\n  missing keys: {show(missing)}' if missing else '')
            + (f'\n  unexpected keys: {show(unexpected)}' if unexpected else '')
            + (f'\n  shape mismatches: {show(wrong_shape)}' if wrong_shape else ''))
    teacher.load_state_dict(state, strict=True)
    MMLogger.get_current_instance().info(
        f'Loaded teacher weights from {path} ({len(state)} tensors, strict)')
    return checkpoint


def forward_arguments(loss_cls: type) -> tuple[list[str], list[str]]:
    """Names of ``loss_cls.forward``'s required and optional arguments (``**kwargs`` ignored)."""
    required, optional = [], []
    for name, param in list(inspect.signature(loss_cls.forward).parameters.items())[1:]:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        (required if param.default is param.empty else optional).append(name)
    return required, optional


@MODELS.register_module()
class SingleTeacherDistiller(BaseModel):
    """Distil a student from a frozen teacher with any number of named losses.

    The teacher is built from its config, loaded strictly from ``teacher_ckpt``, frozen
    (``requires_grad=False``), kept in ``eval()`` whatever ``train()`` is called with, run under
    ``no_grad`` in ``mode='tensor'``, and never re-initialised by ``init_weights``. The student
    trains with its own task loss (logged as ``loss_cls``, scaled by ``task_loss_weight``) plus
    each distillation loss, logged as ``loss_<name>`` (``loss_<name>_<term>`` for dict results).

    A loss declares what it consumes by the names of its ``forward`` arguments: ``s_logits``,
    ``t_logits``, ``gt`` (``[B, C]``, 1 / 0 / -1), ``data_samples``, and ``s_<tap>`` / ``t_<tap>``
    for every tap (``feats`` = backbone output, ``pooled`` = neck output, plus any
    ``student_taps`` / ``teacher_taps`` given as module paths). A name nobody can supply fails at
    build time. A loss whose constructor accepts ``num_classes``, ``s_shapes``, ``t_shapes``,
    ``s_channels`` or ``t_channels`` receives them from a shape probe run once in eval mode under
    ``no_grad``, so its connectors exist before the optimizer and DDP are built.

    Args:
        student: model config dict, or path of a config whose ``model`` is the student.
        teacher: model config dict, or path of the config the teacher was trained with.
        distill_losses: name -> loss config.
        teacher_ckpt: checkpoint of the teacher (mlkd, mmpretrain or distiller checkpoint).
            ``None`` leaves the teacher random, which is only sensible in tests.
        task_loss_weight: factor on the student's own loss.
        student_taps / teacher_taps: extra tap name -> module path (``'path@k'`` for the k-th
            call of a module).
        views: ``None`` when each batch holds one view shared by both nets, or
            ``dict(teacher=i, student=j)`` to feed view i to the teacher and view j to the student
            of a multi-view batch (:class:`MultiViewClsDataPreprocessor`).
        probe_input_size: ``(H, W)`` of the probe input; match the training crop.
        data_preprocessor: the preprocessor shared by both nets (so both must expect the same
            normalisation); defaults to mmpretrain's ``ClsDataPreprocessor``.
    """

    def __init__(self,
                 student: dict | str,
                 teacher: dict | str,
                 distill_losses: dict[str, dict] | None = None,
                 teacher_ckpt: str | None = None,
                 task_loss_weight: float = 1.0,
                 student_taps: dict[str, str] | None = None,
                 teacher_taps: dict[str, str] | None = None,
                 views: dict[str, int] | None = None,
                 probe_input_size: Sequence[int] = (224, 224),
                 data_preprocessor: dict | None = None,
                 init_cfg: dict | None = None) -> None:
        if data_preprocessor is None:
            data_preprocessor = dict(type='ClsDataPreprocessor')
        elif isinstance(data_preprocessor, dict):
            data_preprocessor.setdefault('type', 'ClsDataPreprocessor')
        super().__init__(data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        self.student = build_network(student, 'student')
        self.teacher = build_network(teacher, 'teacher')
        self.teacher_ckpt = teacher_ckpt
        if teacher_ckpt is not None:
            load_teacher_checkpoint(self.teacher, teacher_ckpt)
        # Runner.init_weights() would otherwise re-initialise the loaded teacher.
        self.teacher._is_init = True
        self.teacher.requires_grad_(False)
        self.teacher.eval()
        self.task_loss_weight = float(task_loss_weight)
        if views is not None and set(views) != {'teacher', 'student'}:
            raise ValueError(f"views must be None or dict(teacher=i, student=j), got {views!r}")
        self.views = views
        self.num_classes = self._num_classes()

        self._student_tap_paths = {**DEFAULT_TAPS, **(student_taps or {})}
        self._teacher_tap_paths = {**DEFAULT_TAPS, **(teacher_taps or {})}
        self.distill_losses = nn.ModuleDict()
        self._loss_args: dict[str, list[str]] = {}
        self._build_losses(distill_losses or {}, tuple(probe_input_size))

    # ----------------------------------------------------------------- construction
    def _num_classes(self) -> int:
        counts = {getattr(getattr(net, 'head', None), 'num_classes', None)
                  for net in (self.student, self.teacher)}
        counts.discard(None)
        if len(counts) != 1:
            raise ValueError(f'student and teacher heads must predict the same number of '
                             f'classes, got {sorted(counts)}')
        return counts.pop()

    def _supplied_names(self) -> set[str]:
        names = {'s_logits', 't_logits', 'gt', 'data_samples'}
        names |= {f's_{t}' for t in self._student_tap_paths}
        names |= {f't_{t}' for t in self._teacher_tap_paths}
        return names

    def _build_losses(self, cfgs: dict[str, dict], probe_size: tuple[int, ...]) -> None:
        supplied = self._supplied_names()
        classes = {}
        for name, cfg in cfgs.items():
            loss_cls = MODELS.get(cfg['type']) if isinstance(cfg['type'], str) else cfg['type']
            if loss_cls is None:
                raise KeyError(f'distill_losses.{name}: type {cfg["type"]!r} is not registered '
                               'in the mlkd model registry')
            required, optional = forward_arguments(loss_cls)
            unknown = [a for a in required if a not in supplied]
            if unknown:
                raise ValueError(
                    f'distill_losses.{name} ({loss_cls.__name__}) needs {unknown}, which the '
                    f'distiller cannot supply; available: {sorted(supplied)}. Add a tap with '
                    f'student_taps / teacher_taps (e.g. dict(label_emb="head.decoder")).')
            self._loss_args[name] = required + [a for a in optional if a in supplied]
            classes[name] = loss_cls
        self._student_taps = self._needed_taps('s_', self._student_tap_paths)
        self._teacher_taps = self._needed_taps('t_', self._teacher_tap_paths)

        wants = {name: [a for a in INJECTABLE if a in inspect.signature(cls.__init__).parameters]
                 for name, cls in classes.items()}
        facts = {'num_classes': self.num_classes}
        if any(a != 'num_classes' for w in wants.values() for a in w):
            facts.update(self._probe(probe_size))
        for name, cfg in cfgs.items():
            default_args = {a: facts[a] for a in wants[name] if a not in cfg}
            self.distill_losses[name] = MODELS.build(cfg, default_args=default_args)

    def _needed_taps(self, prefix: str, paths: dict[str, str]) -> dict[str, str]:
        needed = {a[len(prefix):] for args in self._loss_args.values() for a in args
                  if a.startswith(prefix)}
        return {name: paths[name] for name in sorted(needed)}

    @torch.no_grad()
    def _probe(self, size: tuple[int, ...]) -> dict[str, Any]:
        """Shapes and channels of the used taps, from one eval-mode forward of each net."""
        facts = {}
        for prefix, owner, net, paths in (('s', 'student', self.student, self._student_taps),
                                          ('t', 'teacher', self.teacher, self._teacher_taps)):
            was_training = net.training
            net.eval()
            with Taps(net, {'logits': 'head', **paths}, owner=owner) as taps:
                net(torch.zeros(2, 3, *size), mode='tensor')
            net.train(was_training)
            shapes = {k: _shape(v) for k, v in taps.values().items()}
            facts[f'{prefix}_shapes'] = shapes
            facts[f'{prefix}_channels'] = {k: _channels(v) for k, v in shapes.items()}
        self.teacher.eval()
        return facts

    # ----------------------------------------------------------------- modes
    def train(self, mode: bool = True) -> 'SingleTeacherDistiller':
        super().train(mode)
        self.teacher.eval()
        return self

    def _view(self, inputs: torch.Tensor | Sequence[torch.Tensor], role: str) -> torch.Tensor:
        if self.views is None:
            if not isinstance(inputs, torch.Tensor):
                raise TypeError('the batch holds several views; set views=dict(teacher=i, '
                                'student=j) on the distiller')
            return inputs
        if isinstance(inputs, torch.Tensor):
            return inputs  # single-view evaluation batches feed both nets
        return inputs[self.views[role]]

    def forward(self, inputs, data_samples=None, mode: str = 'tensor'):
        if mode == 'loss':
            return self.loss(inputs, data_samples)
        if mode == 'predict':
            return self.student(self._view(inputs, 'student'), data_samples, mode='predict')
        if mode == 'tensor':
            return self.student(self._view(inputs, 'student'), mode='tensor')
        raise RuntimeError(f'invalid mode {mode!r}; expected loss, predict or tensor')

    @torch.no_grad()
    def teacher_predict(self, inputs, data_samples=None) -> list:
        """The teacher's predictions (for ``TeacherEvalHook`` and sanity checks)."""
        return self.teacher(self._view(inputs, 'teacher'), data_samples, mode='predict')

    def loss(self, inputs, data_samples) -> dict[str, torch.Tensor]:
        available: dict[str, Any] = {}
        with torch.no_grad(), Taps(self.teacher, {'logits': 'head', **self._teacher_taps},
                                   'teacher') as teacher_taps:
            self.teacher(self._view(inputs, 'teacher'), mode='tensor')
        available.update({f't_{k}': v for k, v in teacher_taps.values().items()})
        with Taps(self.student, {'logits': 'head', **self._student_taps},
                  'student') as student_taps:
            task = self.student(self._view(inputs, 'student'), data_samples, mode='loss')
        available.update({f's_{k}': v for k, v in student_taps.values().items()})
        available['gt'] = targets_from_samples(data_samples, self.num_classes,
                                               device=available['s_logits'].device)
        available['data_samples'] = data_samples

        losses = {}
        for key, value in task.items():
            name = 'loss_cls' if key == 'loss' else f'{key}_cls' if 'loss' in key else key
            losses[name] = value * self.task_loss_weight if 'loss' in key else value
        with full_precision():
            for name, loss in self.distill_losses.items():
                value = loss(**{a: available[a] for a in self._loss_args[name]})
                if isinstance(value, dict):
                    for term, term_value in value.items():
                        losses[f'loss_{name}_{term}'] = term_value
                else:
                    losses[f'loss_{name}'] = value
        return losses


def _channels(shape):
    if shape and isinstance(shape[0], tuple):
        return [s[1] for s in shape]
    return shape[1] if shape and len(shape) > 1 else None


def _shape(value: Any):
    if isinstance(value, torch.Tensor):
        return tuple(value.shape)
    if isinstance(value, (tuple, list)):
        return type(value)(_shape(v) for v in value)
    return None
