"""Exponential moving average of the student only (never of the frozen teacher)."""

from __future__ import annotations

import copy

from mmengine.hooks import EMAHook
from mmengine.runner.checkpoint import load_state_dict

from mlkd.models.utils import unwrap_model
from mlkd.models.weights import STUDENT_PREFIX as STUDENT
from mlkd.registry import HOOKS, MODELS


@HOOKS.register_module()
class StudentEMAHook(EMAHook):
    """mmengine's ``EMAHook`` restricted to ``model.student``.

    The plain hook averages the whole model: for a distiller that copies the teacher too (twice the
    teacher's memory for a network that never changes). This hook averages the student only;
    validation and test swap the EMA weights in, and checkpoints store them as the student's
    weights in ``state_dict`` (the raw weights go to ``ema_state_dict``), as mmengine does, so
    ``tools/export_student.py`` exports the EMA student. ASL / L2D-family recipes use
    ``momentum=0.0003`` (decay 0.9997) with ``type='ExponentialMovingAverage'``.
    """

    def before_run(self, runner) -> None:
        model = unwrap_model(runner.model)
        if not hasattr(model, 'student'):
            raise TypeError(
                'StudentEMAHook needs a model with a `student` (a distiller); '
                'use EMAHook for plain classifiers'
            )
        self.src_model = model.student
        self.ema_model = MODELS.build(self.ema_cfg, default_args=dict(model=self.src_model))

    def _swap_ema_state_dict(self, checkpoint: dict) -> None:
        model_state, ema_state = checkpoint['state_dict'], checkpoint['ema_state_dict']
        for key in ema_state:
            if key.startswith('module.'):
                student_key = STUDENT + key[len('module.') :]
                ema_state[key], model_state[student_key] = (
                    model_state[student_key],
                    ema_state[key],
                )

    def after_load_checkpoint(self, runner, checkpoint: dict) -> None:
        if 'ema_state_dict' in checkpoint and runner._resume:
            self._swap_ema_state_dict(checkpoint)
            self.ema_model.load_state_dict(checkpoint['ema_state_dict'], strict=self.strict_load)
            return
        student_state = {
            k[len(STUDENT) :]: v
            for k, v in checkpoint['state_dict'].items()
            if k.startswith(STUDENT)
        }
        load_state_dict(
            self.ema_model.module, copy.deepcopy(student_state), strict=self.strict_load
        )
