"""Evaluate the frozen teacher once, before the first training step."""

from __future__ import annotations

import torch
from mmengine.hooks import Hook

from mlkd.models.utils import unwrap_model
from mlkd.registry import HOOKS

from .loss_diagnostics import preserved_state


@HOOKS.register_module()
class TeacherEvalHook(Hook):
    """Run the validation set through the teacher at ``before_train`` and log ``teacher/<metric>``.

    A badly loaded teacher (wrong checkpoint, wrong class order, wrong normalisation) shows up at
    step 0 instead of as a mysteriously weak student. The teacher never changes, so it is
    evaluated once (mmrazor re-evaluates it at every validation). Skipped without a validation
    loop, for models without ``teacher_predict``, and when resuming.

    The evaluation runs under :func:`preserved_state`: iterating a DataLoader draws its base seed
    from the global torch RNG, which would otherwise shift every later random draw (dropout) and
    make a distilled run differ from the same run without this hook.
    """

    priority = 'LOW'

    def before_train(self, runner) -> None:
        model = unwrap_model(runner.model)
        loop = getattr(runner, '_val_loop', None)
        if not hasattr(model, 'teacher_predict') or loop is None or isinstance(loop, dict):
            return
        if runner.iter > 0:  # resumed: the teacher was evaluated when the run started
            runner.logger.info('Resumed run: teacher evaluation skipped (see the first log)')
            return
        evaluator, dataloader = loop.evaluator, loop.dataloader
        was_training = model.training
        model.eval()
        with torch.no_grad(), preserved_state(model):
            for data_batch in dataloader:
                data = model.data_preprocessor(data_batch, False)
                outputs = model.teacher_predict(data['inputs'], data['data_samples'])
                evaluator.process(data_samples=outputs, data_batch=data_batch)
        metrics = evaluator.evaluate(len(dataloader.dataset))
        model.train(was_training)
        for key, value in metrics.items():
            runner.message_hub.update_scalar(f'teacher/{key}', value)
        runner.logger.info(
            'Teacher on the validation set: '
            + '  '.join(
                f'teacher/{k}: {v:.4f}' if isinstance(v, float) else f'teacher/{k}: {v}'
                for k, v in metrics.items()
            )
        )
        runner.visualizer.add_scalars(
            {f'teacher/{k}': v for k, v in metrics.items() if isinstance(v, (int, float))}, step=0
        )
