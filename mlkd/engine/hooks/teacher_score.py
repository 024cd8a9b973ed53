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
    every data sample (:meth:`~mlkd.models.distillers.base.Distiller.forward`); without such a metric the
    evaluation costs what it did (no teacher forward). A model that cannot score a teacher (a
    plain classifier, or a multi-teacher distiller without a teacher to compare with:
    ``MultiTeacherDistiller.check_teacher_score``) is refused, naming the metric: before training
    for the val evaluator, before the loop for the test one.
    """

    priority = 'NORMAL'

    def before_train(self, runner) -> None:
        # A val evaluator the model cannot serve fails now, not after the first epoch.
        loop = getattr(runner, '_val_loop', None)
        if loop is not None and not isinstance(loop, dict):
            self._check(
                unwrap_model(runner.model), needs_teacher_score(loop.evaluator), 'val_evaluator'
            )

    def before_val(self, runner) -> None:
        self._switch(runner, runner.val_loop.evaluator, 'val_evaluator')

    def after_val(self, runner) -> None:
        self._switch(runner, None, 'val_evaluator')

    def before_test(self, runner) -> None:
        self._switch(runner, runner.test_loop.evaluator, 'test_evaluator')

    def after_test(self, runner) -> None:
        self._switch(runner, None, 'test_evaluator')

    @classmethod
    def _switch(cls, runner, evaluator, key: str) -> None:
        model = unwrap_model(runner.model)
        names = needs_teacher_score(evaluator) if evaluator is not None else []
        cls._check(model, names, key)
        if hasattr(model, 'eval_teacher_score'):
            model.eval_teacher_score = bool(names)

    @staticmethod
    def _check(model, names: list[str], key: str) -> None:
        """Refuse metrics ``names`` of evaluator ``key`` reading teacher scores the model
        cannot give."""
        if not names:
            return
        if not hasattr(model, 'eval_teacher_score'):
            raise TypeError(
                f"{key} holds {names}, which read the teacher's scores, but the model "
                f'({type(model).__name__}) has no teacher: evaluate a distillation config, or '
                'a plain student with tools/test.py CONFIG CKPT --teacher TEACHER_CONFIG '
                'TEACHER_CKPT'
            )
        check = getattr(model, 'check_teacher_score', None)
        if check is not None:
            check(names, key)
