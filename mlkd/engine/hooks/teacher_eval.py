"""Evaluate the frozen teacher(s) once, before the first training step."""

from __future__ import annotations

import json
import math
import os.path as osp
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from mmengine.dist import is_main_process
from mmengine.evaluator import BaseMetric
from mmengine.hooks import Hook

from mlkd.evaluation.metrics.functional import average_precision, mean_of_ap
from mlkd.models.utils import batch_targets, unwrap_model
from mlkd.registry import HOOKS
from mlkd.utils.atomic import atomic_write
from mlkd.utils.tables import render_table

from .loss_diagnostics import preserved_state

#: Where the per-label validation AP of a multi-teacher run is recorded (in its work dir).
LABEL_AP_FILE = 'teacher_label_ap.json'


@HOOKS.register_module()
class TeacherEvalHook(Hook):
    """Run the validation set through the teacher(s) at ``before_train`` and log their scores.

    A badly loaded teacher (wrong checkpoint, wrong class order, wrong normalisation) shows up at
    step 0 instead of as a mysteriously weak student. The teacher never changes, so it is
    evaluated once (mmrazor re-evaluates it at every validation). Skipped without a validation
    loop, for models without teachers, and when resuming.

    * A single teacher (``teacher_predict``) goes through the run's val evaluator:
      ``teacher/<metric>``.
    * The teachers of a :class:`~mlkd.models.distillers.MultiTeacherDistiller`
      (``teacher_logits``) get their AP on each class they share with the student (classes without
      a positive on val: no AP), logged as a table and as ``teacher/<name>/mAP`` (the mean over
      its classes that have an AP) and recorded in ``<work_dir>/teacher_label_ap.json``. With
      ``label_targets='best_val_ap'`` the distiller takes each class's target from the teacher
      with the best AP on it (``model.select_label_teachers``; the file and the log say which).

    The evaluation runs under :func:`preserved_state`: iterating a DataLoader draws its base seed
    from the global torch RNG, which would otherwise shift every later random draw (dropout) and
    make a distilled run differ from the same run without this hook.
    """

    priority = 'LOW'

    def before_train(self, runner) -> None:
        model = unwrap_model(runner.model)
        loop = getattr(runner, '_val_loop', None)
        teachers = hasattr(model, 'teacher_predict') or hasattr(model, 'teacher_logits')
        if not teachers or loop is None or isinstance(loop, dict):
            return
        if runner.iter > 0:  # resumed: the teacher was evaluated when the run started
            runner.logger.info('Resumed run: teacher evaluation skipped (see the first log)')
            return
        if hasattr(model, 'teacher_logits'):
            self._evaluate_teachers(runner, model, loop.dataloader)
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

    @staticmethod
    def _evaluate_teachers(runner, model, dataloader) -> None:
        """Per-label validation AP of every teacher of a multi-teacher distiller (class doc)."""
        metric = TeacherLabelAP(model.label_sets, model.num_classes)
        was_training = model.training
        model.eval()
        with torch.no_grad(), preserved_state(model):
            for data_batch in dataloader:
                data = model.data_preprocessor(data_batch, False)
                metric.add(
                    model.teacher_logits(data['inputs']),
                    batch_targets(data['data_samples'], model.num_classes),
                )
        ap = metric.evaluate(len(dataloader.dataset))['ap']
        model.train(was_training)
        choice = model.select_label_teachers(ap) if model.label_targets == 'best_val_ap' else None
        names = list(getattr(dataloader.dataset, 'metainfo', {}).get('classes') or [])
        if len(names) != model.num_classes:
            names = list(model.label_names)
        for name, values in ap.items():
            score = mean_of_ap(torch.tensor(values, dtype=torch.float64))
            runner.message_hub.update_scalar(f'teacher/{name}/mAP', score)
            runner.visualizer.add_scalars({f'teacher/{name}/mAP': score}, step=0)
        header = ['class', *(f'{name} AP' for name in ap)] + (['target from'] if choice else [])
        rows = [
            [label, *(_percent(ap[name][c]) for name in ap)]
            + ([choice[c] or '-'] if choice else [])
            for c, label in enumerate(names)
        ]
        runner.logger.info(
            "Teachers' AP per class on the validation set (-: the teacher lacks the class or the "
            'class has no positive)'
            + (" and each class's teacher (label_targets='best_val_ap')" if choice else '')
            + ':\n'
            + render_table(header, rows, style='ascii')
        )
        if is_main_process():
            record = dict(
                classes=names,
                label_targets=model.label_targets,
                ap={
                    name: [None if math.isnan(v) else v for v in values]
                    for name, values in ap.items()
                },
                target_from=choice,
            )
            with atomic_write(osp.join(runner.work_dir, LABEL_AP_FILE)) as file:
                file.write((json.dumps(record, indent=1) + '\n').encode())


def _percent(value: float) -> str:
    return '-' if math.isnan(value) else f'{100 * value:.2f}'


class TeacherLabelAP(BaseMetric):
    """Each teacher's AP on each student class it predicts (gathered over ranks like any metric).

    Args:
        label_sets: the distiller's teacher label maps (``model.label_sets``).
        num_classes: the student's class count.
    """

    def __init__(self, label_sets: Mapping[str, Any], num_classes: int) -> None:
        super().__init__()
        self.label_sets, self.num_classes = label_sets, num_classes

    def add(self, logits: Mapping[str, torch.Tensor], target: torch.Tensor) -> None:
        """Store one batch: each teacher's logits ``[B, C_k]`` and the ``[B, C]`` targets."""
        logits = {name: value.float().cpu() for name, value in logits.items()}
        target = target.cpu()
        for i in range(len(target)):  # one record per sample: padded DDP batches are cut by size
            self.results.append(({n: v[i] for n, v in logits.items()}, target[i]))

    def process(self, data_batch: Any, data_samples: Sequence[dict]) -> None:
        raise NotImplementedError('TeacherLabelAP is filled with add()')

    def compute_metrics(self, results: list) -> dict[str, Any]:
        target = torch.stack([t for _, t in results])
        ap = {}
        for name, labels in self.label_sets.items():
            scores = torch.stack([s[name] for s, _ in results])
            columns = list(labels.student_index)
            values = [math.nan] * self.num_classes
            own = average_precision(scores, target[:, columns], empty_policy='exclude')
            for column, value in zip(columns, own.tolist()):
                values[column] = value
            ap[name] = values
        return {'ap': ap}
