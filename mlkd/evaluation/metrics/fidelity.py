"""Distillation fidelity: how far the student moved toward its teacher on the evaluation split.

Stanton et al., "Does knowledge distillation really work?" (NeurIPS 2021) separate a student's
*generalisation* (its accuracy against the labels) from its *fidelity* (its agreement with the
teacher). A distillation term that changes neither says nothing; one that raises fidelity but not
accuracy transfers the teacher's errors as well as its knowledge. This metric reads the teacher's
scores that a distiller puts on every evaluated data sample as ``teacher_score`` (beside the
student's ``pred_score``; :class:`~mlkd.models.distillers.SingleTeacherDistiller`, switched on by
:class:`~mlkd.engine.hooks.TeacherScoreHook` when an evaluator holds this metric).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from mmengine.evaluator import BaseMetric
from torch import Tensor

from mlkd.registry import METRICS

from .functional import average_precision, check_finite_scores, mean_of_ap

__all__ = ['DistillFidelity', 'FIDELITY_MODES', 'fidelity_metrics']

FIDELITY_MODES = ('multi_label', 'single_label')


def _multi_label_fidelity(student: Tensor, teacher: Tensor, thr: float) -> dict[str, float]:
    """Multi-label keys from sigmoid scores ``[N, C]`` (see :class:`DistillFidelity`)."""
    teacher_pos = teacher >= thr
    student_pos = student >= thr
    # Classes without a teacher-positive sample have no AP (NaN) and are skipped (MultiLabelMetrics
    # counts an empty class as AP 0 by default: its empty_policy).
    ap = average_precision(student, teacher_pos, empty_policy='exclude')
    union = (student_pos | teacher_pos).sum(dim=1)
    inter = (student_pos & teacher_pos).sum(dim=1)
    # Jaccard index of the two label sets; 1 where both are empty (they agree).
    jaccard = torch.where(union > 0, inter.double() / union.clamp(min=1).double(), 1.0)
    return {
        'mAP_vs_teacher': mean_of_ap(ap),
        'mean_abs_diff': float((student.double() - teacher.double()).abs().mean()),
        'label_agreement': float(jaccard.mean()) * 100.0,
    }


def _single_label_fidelity(student: Tensor, teacher: Tensor) -> dict[str, float]:
    """Single-label keys from softmax scores ``[N, C]`` (see :class:`DistillFidelity`)."""
    agree = student.argmax(dim=1) == teacher.argmax(dim=1)
    p_t = teacher.double()
    # A softmax that underflowed to 0 would make the KL infinite: floor the student's
    # probabilities at float32's smallest normal number (log = -87.3).
    p_s = student.double().clamp(min=torch.finfo(torch.float32).tiny)
    kl = (torch.xlogy(p_t, p_t) - torch.xlogy(p_t, p_s)).sum(dim=1)
    return {'top1_agreement': float(agree.double().mean()) * 100.0, 'kl': float(kl.mean())}


def fidelity_metrics(
    student: Tensor, teacher: Tensor, mode: str = 'multi_label', thr: float = 0.5
) -> dict[str, float]:
    """Fidelity of ``student`` scores to ``teacher`` scores, both ``[N, C]`` probabilities.

    Returns the keys of :class:`DistillFidelity` without the ``fidelity/`` prefix.
    """
    if mode not in FIDELITY_MODES:
        raise ValueError(f'DistillFidelity: mode must be one of {FIDELITY_MODES}, got {mode!r}')
    if student.dim() != 2 or student.shape != teacher.shape:
        raise ValueError(
            'DistillFidelity: pred_score and teacher_score must have the same [N, C] shape, got '
            f'{tuple(student.shape)} and {tuple(teacher.shape)} (is the teacher a classifier of '
            'the same classes?)'
        )
    check_finite_scores(student)
    check_finite_scores(teacher)
    if mode == 'multi_label':
        return _multi_label_fidelity(student, teacher, thr)
    return _single_label_fidelity(student, teacher)


@METRICS.register_module()
class DistillFidelity(BaseMetric):
    """Agreement of the student's scores with the teacher's on the evaluated split.

    Keys (prefix ``fidelity/``). Multi-label (``pred_score`` and ``teacher_score`` sigmoid
    probabilities ``[C]``):

    - ``fidelity/mAP_vs_teacher``: mAP (percent) of the student's scores against the teacher's
      predictions thresholded at ``thr`` (``teacher_score >= thr`` positive); classes with no
      teacher-positive sample are skipped (``empty_policy='exclude'``; mlkd's mAP counts an
      empty class as 0 by default), NaN if no class has one.
    - ``fidelity/mean_abs_diff``: mean over samples and classes of ``|p_s - p_t|`` (a
      probability, not percent).
    - ``fidelity/label_agreement``: mean over samples of the Jaccard index (percent) of the two
      label sets thresholded at ``thr``; a sample where both sets are empty counts 1.

    Single-label (softmax probabilities):

    - ``fidelity/top1_agreement``: percent of samples whose arg-max classes agree.
    - ``fidelity/kl``: mean over samples of KL(p_t ‖ p_s) in nats (the student's probabilities
      floored at float32's smallest normal number, so an underflowed softmax stays finite).

    Args:
        mode: ``'multi_label'`` or ``'single_label'``.
        thr: threshold of the multi-label label sets.
        collect_device: ``'cpu'`` or ``'gpu'`` for gathering results across ranks.
        prefix: key prefix, ``'fidelity'`` by default.

    A data sample without ``teacher_score`` is refused: evaluate a distillation config (its
    distiller scores the teacher when this metric is in the evaluator), or a plain student with
    ``tools/test.py CONFIG CKPT --teacher TEACHER_CONFIG TEACHER_CKPT``.
    """

    default_prefix: str | None = 'fidelity'
    #: Read by :class:`~mlkd.engine.hooks.TeacherScoreHook`: the model must put the teacher's
    #: scores on every data sample while this metric's loop runs.
    needs_teacher_score = True

    def __init__(
        self,
        mode: str = 'multi_label',
        thr: float = 0.5,
        collect_device: str = 'cpu',
        prefix: str | None = None,
    ) -> None:
        super().__init__(collect_device=collect_device, prefix=prefix)
        if mode not in FIDELITY_MODES:
            raise ValueError(f'DistillFidelity: mode must be one of {FIDELITY_MODES}, got {mode!r}')
        self.mode = mode
        self.thr = float(thr)

    def process(self, data_batch: Any, data_samples: Sequence[dict]) -> None:
        """Keep one ``{'pred_score', 'teacher_score'}`` record (float32, CPU) per sample."""
        for data_sample in data_samples:
            if 'teacher_score' not in data_sample:
                raise KeyError(
                    'DistillFidelity: the data sample has no `teacher_score`; the evaluated model '
                    'must be a distiller (with TeacherScoreHook in custom_hooks, as in '
                    'configs/_base_/default_runtime.py), or evaluate a plain student with '
                    'tools/test.py CONFIG CKPT --teacher TEACHER_CONFIG TEACHER_CKPT'
                )
            self.results.append(
                {
                    key: torch.as_tensor(data_sample[key]).detach().to('cpu', torch.float32)
                    for key in ('pred_score', 'teacher_score')
                }
            )

    def compute_metrics(self, results: list) -> dict[str, float]:
        """Stack the records and return the keys of the mode."""
        student = torch.stack([r['pred_score'].reshape(-1) for r in results])
        teacher = torch.stack([r['teacher_score'].reshape(-1) for r in results])
        return fidelity_metrics(student, teacher, self.mode, self.thr)
