"""Ask the model for the teacher's scores only while an evaluator needs them."""

from __future__ import annotations

from mmengine.hooks import Hook

from mlkd.models.utils import unwrap_model
from mlkd.registry import HOOKS


def needs_teacher_score(evaluator) -> list[str]:
    """Names of the metrics of ``evaluator`` that read ``teacher_score`` from the data samples
    (their class sets ``needs_teacher_score = True``, as :class:`~mlkd.evaluation.DistillFidelity`)."""
    return [
        type(metric).__name__
        for metric in getattr(evaluator, 'metrics', [])
        if getattr(metric, 'needs_teacher_score', False)
    ]


@HOOKS.register_module()
class TeacherScoreHook(Hook):
    """Switch the model's ``eval_teacher_score`` on for a val / test loop whose evaluator holds a
    metric that reads ``teacher_score`` (``DistillFidelity``), and off again after it.

    A distiller then runs its teacher on each evaluated batch and puts the teacher's scores on
    every data sample (:meth:`SingleTeacherDistiller.forward`); without such a metric the
    evaluation costs what it did (no teacher forward). A model that cannot score a teacher (a
    plain classifier) is refused before the loop, naming the metric.
    """

    priority = 'NORMAL'

    def before_val(self, runner) -> None:
        self._switch(runner, runner.val_loop.evaluator, 'val_evaluator')

    def after_val(self, runner) -> None:
        self._switch(runner, None, 'val_evaluator')

    def before_test(self, runner) -> None:
        self._switch(runner, runner.test_loop.evaluator, 'test_evaluator')

    def after_test(self, runner) -> None:
        self._switch(runner, None, 'test_evaluator')

    @staticmethod
    def _switch(runner, evaluator, key: str) -> None:
        model = unwrap_model(runner.model)
        names = needs_teacher_score(evaluator) if evaluator is not None else []
        if not hasattr(model, 'eval_teacher_score'):
            if names:
                raise TypeError(
                    f"{key} holds {names}, which read the teacher's scores, but the model "
                    f'({type(model).__name__}) has no teacher: evaluate a distillation config, or '
                    'a plain student with tools/test.py CONFIG CKPT --teacher TEACHER_CONFIG '
                    'TEACHER_CKPT'
                )
            return
        model.eval_teacher_score = bool(names)
