"""What every distiller shares: a trained student, frozen teachers, views, the three modes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
from torch import nn

from mlkd.models.algorithms.base import RoutedAlgorithm
from mlkd.models.builder import build_network
from mlkd.models.weights import load_network_checkpoint


def build_frozen_teacher(
    cfg: dict | str,
    ckpt: str | Mapping | None,
    allow_random: bool,
    role: str = 'teacher',
    ckpt_key: str = 'model.teacher_ckpt',
    allow_key: str = 'model.allow_random_teacher',
) -> nn.Module:
    """A teacher network built from its config, loaded strictly from ``ckpt``, frozen.

    Building does not consume the global random stream (the student, and anything built later,
    starts exactly as in a plain student run); the network is marked initialised (the Runner's
    ``init_weights`` must not overwrite the loaded weights), ``requires_grad=False``, in eval mode.

    Args:
        cfg: the teacher's model config, config path or ``dict(cfg_path=..., **overrides)``.
        ckpt: its checkpoint (:func:`~mlkd.models.weights.load_network_checkpoint`); ``None`` is
            refused unless ``allow_random``.
        allow_random: accept ``ckpt=None`` (a random teacher: tests of the plumbing only).
        role: the teacher's name in messages.
        ckpt_key, allow_key: the config keys of ``ckpt`` and ``allow_random``, named when the
            checkpoint is missing.
    """
    with torch.random.fork_rng(devices=[]):
        net = build_network(cfg, role)
    if ckpt is not None:
        load_network_checkpoint(net, ckpt, role)
    elif not allow_random:
        raise ValueError(
            f'{ckpt_key} is None: the {role} would stay random and the student would learn '
            f"noise. Set {ckpt_key} to the {role}'s checkpoint or work dir (or, in a test of the "
            f'plumbing only, {allow_key}=True)'
        )
    net._is_init = True
    net.requires_grad_(False)
    net.eval()
    return net


class Distiller(RoutedAlgorithm):
    """Base of mlkd's distillers: one trained student and frozen teachers (subclasses build them).

    It builds the student (``s_`` taps), routes batch views to the networks, keeps the teachers
    (:meth:`frozen_networks`) in ``eval()`` whatever ``train()`` is called with, and answers the
    three modes: ``loss`` (the subclass's :meth:`loss`), ``predict`` and ``tensor`` (the
    student's). The task loss of the student logs as ``loss_cls``, scaled by ``task_loss_weight``.
    While ``eval_teacher_score`` is set (by ``TeacherScoreHook``, when an evaluator holds
    ``DistillFidelity``), ``predict`` also puts a teacher's scores on every sample as
    ``teacher_score`` (:meth:`_put_teacher_scores`; which teacher: the subclass's).

    Args:
        student: model config dict, or path of a config whose ``model`` is the student.
        task_loss_weight: factor on the student's own loss.
        views: ``None`` when each batch holds one view shared by all networks, or
            ``dict(teacher=i, student=j)`` to feed view i to the teacher(s) and view j to the
            student of a multi-view batch (:class:`MultiViewClsDataPreprocessor`).
        data_preprocessor, probe_input_size, init_cfg, loss_guard: see
            :class:`~mlkd.models.algorithms.RoutedAlgorithm`.
    """

    losses_attr = 'distill_losses'

    def __init__(
        self,
        student: dict | str,
        task_loss_weight: float = 1.0,
        views: dict[str, int] | None = None,
        probe_input_size: Sequence[int] = (224, 224),
        data_preprocessor: dict | None = None,
        init_cfg: dict | None = None,
        loss_guard: Mapping | None = None,
    ) -> None:
        super().__init__(data_preprocessor, probe_input_size, init_cfg, loss_guard)
        self.student = build_network(student, 'student')
        self.task_loss_weight = float(task_loss_weight)
        if views is not None and set(views) != {'teacher', 'student'}:
            raise ValueError(f'views must be None or dict(teacher=i, student=j), got {views!r}')
        self.views = views
        # Set by TeacherScoreHook while an evaluator reads `teacher_score` (DistillFidelity).
        self.eval_teacher_score = False

    def frozen_networks(self) -> list[nn.Module]:
        """The teacher networks (kept in eval mode; subclasses list theirs)."""
        raise NotImplementedError

    def train(self, mode: bool = True) -> Distiller:
        super().train(mode)
        for net in self.frozen_networks():
            net.eval()
        return self

    def _view(self, inputs: torch.Tensor | Sequence[torch.Tensor], role: str) -> torch.Tensor:
        if self.views is None:
            if not isinstance(inputs, torch.Tensor):
                raise TypeError(
                    'the batch holds several views; set views=dict(teacher=i, '
                    'student=j) on the distiller'
                )
            return inputs
        if isinstance(inputs, torch.Tensor):
            return inputs  # single-view evaluation batches feed both nets
        return inputs[self.views[role]]

    def forward(self, inputs, data_samples=None, mode: str = 'tensor'):
        if mode == 'loss':
            return self.loss(inputs, data_samples)
        if mode == 'predict':
            predictions = self.student(self._view(inputs, 'student'), data_samples, mode='predict')
            if self.eval_teacher_score:
                self._put_teacher_scores(inputs, predictions)
            return predictions
        if mode == 'tensor':
            return self.student(self._view(inputs, 'student'), mode='tensor')
        raise RuntimeError(f'invalid mode {mode!r}; expected loss, predict or tensor')

    def check_teacher_score(self, metrics: Sequence[str], key: str) -> None:
        """Raise a ValueError if this distiller cannot put a teacher's scores on the evaluated
        samples for ``metrics`` of evaluator ``key`` (``TeacherScoreHook`` asks before training
        and before each val / test loop). Every subclass with one teacher can."""

    def _put_teacher_scores(self, inputs, predictions: list) -> None:
        """Put a teacher's scores ``[C]`` on every student prediction as ``teacher_score``
        (while :attr:`eval_teacher_score` is set)."""
        raise NotImplementedError

    def loss(self, inputs, data_samples) -> dict[str, torch.Tensor]:
        raise NotImplementedError
