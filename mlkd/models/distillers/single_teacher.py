"""One frozen teacher, one student, any number of named distillation losses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from mlkd.models.algorithms.base import task_loss_keys
from mlkd.models.builder import network_taps
from mlkd.models.weights import checkpoint_classes
from mlkd.registry import MODELS
from mlkd.teacher_cache import TeacherOutputCache

from .base import Distiller, build_frozen_teacher
from .teacher_source import TeacherSource, build_teacher_source


@MODELS.register_module()
class SingleTeacherDistiller(Distiller):
    """Distil a student from a frozen teacher with any number of named losses.

    The teacher is built from its config, loaded strictly from ``teacher_ckpt``, frozen
    (``requires_grad=False``), kept in ``eval()`` whatever ``train()`` is called with, run under
    ``no_grad`` in ``mode='tensor'``, and never re-initialised by ``init_weights``. The student
    trains with its own task loss (logged as ``loss_cls``, scaled by ``task_loss_weight``) plus
    each distillation loss, logged as ``loss_<name>`` (``loss_<name>_<term>`` for dict results).

    Losses and connectors receive named tensors (see :mod:`mlkd.models.algorithms.base`):
    ``s_<tap>`` / ``t_<tap>`` for the student's and teacher's taps (``logits``, ``feats``,
    ``pooled`` and any ``student_taps`` / ``teacher_taps``), ``gt``, ``gt_full``, ``sample_idx``,
    ``data_samples`` and the connectors' outputs; ``inputs=dict(arg='name')`` in a loss config
    remaps argument names. A loss whose constructor accepts ``num_classes``, ``s_shapes``,
    ``t_shapes``, ``s_channels``, ``t_channels``, ``shapes``, ``channels`` or ``input_channels``
    receives them from a shape probe run once in eval mode under ``no_grad``, before the optimizer
    and DDP exist; one that accepts ``teacher`` receives the loaded, frozen teacher network (to
    read fixed facts from it, e.g. OFD's BN margins; it must not keep a reference).

    Args:
        student: model config dict, or path of a config whose ``model`` is the student.
        teacher: model config dict, or path of the config the teacher was trained with.
        distill_losses: name -> loss config (keys ``inputs`` and ``gather`` are the router's).
        connectors: name -> connector config (``source``, optional ``target``), trained with the
            student and never exported with it.
        teacher_ckpt: checkpoint of the teacher (mlkd, mmpretrain or distiller checkpoint), or the
            teacher's work dir (its last checkpoint). ``None`` is refused unless
            ``allow_random_teacher`` is set.
        allow_random_teacher: accept ``teacher_ckpt=None`` and distil from a randomly
            initialised teacher (only sensible in tests of the plumbing).
        task_loss_weight: factor on the student's own loss.
        student_taps / teacher_taps: tap name -> module path (``'path@k'`` for the k-th call of
            a module), added to the taps the network's config declares (its ``taps``,
            :func:`~mlkd.models.builder.network_taps`); a name given here takes this path.
        views: ``None`` when each batch holds one view shared by both nets, or
            ``dict(teacher=i, student=j)`` to feed view i to the teacher and view j to the student
            of a multi-view batch (:class:`MultiViewClsDataPreprocessor`).
        probe_input_size: ``(H, W)`` of the probe input; match the training crop (the shipped
            configs take the dataset config's ``image_size``).
        data_preprocessor: the preprocessor shared by both nets (so both must expect the same
            normalisation); defaults to :class:`MultiLabelDataPreprocessor`.
        teacher_cache: ``dict(dir=..., mode='write' | 'read', dtype='float32')``: store the
            teacher's outputs per (seed, epoch, sample index) while training (``'write'``), or
            train from a stored cache instead of running the teacher (``'read'``), bit-identical
            to the live teacher (:mod:`mlkd.teacher_cache`; needs ``TeacherCacheHook``).
            ``None``, or ``dir`` and ``mode`` both ``None`` (the shipped configs' default), runs
            the teacher. The choice is the distiller's :attr:`teacher_source`
            (:mod:`~mlkd.models.distillers.teacher_source`).
        loss_guard: NaN / inf and divergence checks of every step's losses
            (:class:`~mlkd.models.algorithms.RoutedAlgorithm`); ``None`` leaves them to the
            optimizer wrapper.
    """

    def __init__(
        self,
        student: dict | str,
        teacher: dict | str,
        distill_losses: dict[str, dict] | None = None,
        connectors: dict[str, dict] | None = None,
        teacher_ckpt: str | None = None,
        allow_random_teacher: bool = False,
        task_loss_weight: float = 1.0,
        student_taps: dict[str, str] | None = None,
        teacher_taps: dict[str, str] | None = None,
        views: dict[str, int] | None = None,
        probe_input_size: Sequence[int] = (224, 224),
        data_preprocessor: dict | None = None,
        teacher_cache: dict | None = None,
        init_cfg: dict | None = None,
        loss_guard: Mapping | None = None,
    ) -> None:
        cache = TeacherOutputCache.from_config(teacher_cache)  # a bad config fails before building
        super().__init__(
            student,
            task_loss_weight,
            views,
            probe_input_size,
            data_preprocessor,
            init_cfg,
            loss_guard,
        )
        self.teacher = build_frozen_teacher(teacher, teacher_ckpt, allow_random_teacher)
        self.teacher_ckpt = teacher_ckpt
        # What the teacher was trained to predict, in output order (its checkpoint's record):
        # read by index, so NumClassesCheckHook requires the dataset's classes.
        self.teacher_checkpoint_classes = {
            'teacher': None if teacher_ckpt is None else checkpoint_classes(teacher_ckpt, 'teacher')
        }
        self.num_classes = self._num_classes()
        self.build_routing(
            {
                's_': network_taps(student, student_taps, 'student'),
                't_': network_taps(teacher, teacher_taps, 'teacher'),
            },
            distill_losses,
            connectors,
            facts={'num_classes': self.num_classes, 'teacher': self.teacher},
        )
        self.serve_teacher_from(cache)

    def serve_teacher_from(self, cache: Mapping | TeacherOutputCache | None) -> None:
        """Set where :meth:`loss` gets the teacher's outputs (:attr:`teacher_source`): the live
        teacher (``None``) or a teacher cache (its config dict, or a built cache)."""
        self.teacher_source = build_teacher_source(
            cache,
            self.teacher,
            self.run_teacher,
            self.teacher_outputs,
            view=(self.views or {}).get('teacher'),
            tap_paths={f't_{name}': path for name, path in self._recorded[('', 't_')].items()},
        )

    def networks(self) -> dict:
        return {'s_': (self.student, 'student'), 't_': (self.teacher, 'teacher')}

    def frozen_networks(self) -> list[torch.nn.Module]:
        return [self.teacher]

    def _num_classes(self) -> int:
        counts = {
            getattr(getattr(net, 'head', None), 'num_classes', None)
            for net in (self.student, self.teacher)
        }
        counts.discard(None)
        if len(counts) != 1:
            raise ValueError(
                f'student and teacher heads must predict the same number of '
                f'classes, got {sorted(counts)}'
            )
        return counts.pop()

    @torch.no_grad()
    def teacher_predict(self, inputs, data_samples=None) -> list:
        """The teacher's predictions (for ``TeacherEvalHook`` and sanity checks); each carries its
        own scores as ``teacher_score`` too, so an evaluator holding ``DistillFidelity`` scores
        the teacher against itself."""
        predictions = self.teacher(self._view(inputs, 'teacher'), data_samples, mode='predict')
        for sample in predictions:
            sample.set_field(sample.pred_score, 'teacher_score')
        return predictions

    @torch.no_grad()
    def _put_teacher_scores(self, inputs, predictions: list) -> None:
        """Put the teacher's scores (its head's own activation: sigmoid for multi-label heads,
        softmax for single-label ones) on every student prediction as ``teacher_score``.

        The teacher runs live: a teacher cache holds the training batches of each epoch, not the
        evaluation splits. Fresh data samples receive the teacher's predictions, so the student's
        ``pred_score`` / ``pred_label`` stay untouched.
        """
        teacher = self.teacher(self._view(inputs, 'teacher'), mode='predict')
        for sample, scored in zip(predictions, teacher):
            sample.set_field(scored.pred_score, 'teacher_score')

    @property
    def teacher_outputs(self) -> list[str]:
        """Names of the teacher tensors a training step uses (``t_logits`` and the taps that a
        connector or loss reads): what a teacher cache stores."""
        return [f't_{name}' for name in self._recorded[('', 't_')]]

    def run_teacher(self, inputs) -> dict[str, Any]:
        """The live teacher's :attr:`teacher_outputs` on a preprocessed batch (``no_grad``)."""
        with torch.no_grad(), self.record('t_') as teacher_taps:
            self.teacher(self._view(inputs, 'teacher'), mode='tensor')
        return teacher_taps.values()

    @property
    def teacher_sources(self) -> dict[str, TeacherSource]:
        """Every teacher source by teacher name (one here): what ``TeacherCacheHook`` drives."""
        return {'teacher': self.teacher_source}

    def loss(self, inputs, data_samples) -> dict[str, torch.Tensor]:
        available: dict[str, Any] = self.teacher_source(inputs, data_samples)
        with self.record('s_') as student_taps:
            task = self.student(self._view(inputs, 'student'), data_samples, mode='loss')
        available.update(student_taps.values())
        available.update(
            self.batch_names(data_samples, self.num_classes, available['s_logits'].device)
        )
        return self.route(available, task_loss_keys(task, self.task_loss_weight))
