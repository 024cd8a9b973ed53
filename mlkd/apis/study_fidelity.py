"""Fidelity of a study's students to the teacher runs of their seed, from stored checkpoints.

A student's fidelity to a teacher (Stanton et al., NeurIPS 2021; :class:`DistillFidelity`) says
whether distillation moved it toward that teacher; measured for the student alone too, it is the
baseline a distilled run moved from. :func:`fidelity_to_teacher` evaluates a student run's last
weights inside the config of a distilled run of the study that the teacher run taught (``via``:
the same student network, the teacher run's checkpoint), so that a plain and a distilled student
are scored by the same code, and a distilled run against its own teacher gets the fidelity its own
evaluation would. No training; nothing of the runs is changed.

Each measurement is stored beside the student's result
(``<work dir>/seed<S>/<student>/fidelity_<teacher>_<split>.json``) with the fingerprints of the
three runs' identities, and reused while they are the same.
"""

from __future__ import annotations

import json
import os.path as osp
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from mlkd.apis.runs import add_fidelity, fidelity_of, quiet
from mlkd.apis.study import Study

__all__ = ['fidelity_path', 'fidelity_to_teacher']


def fidelity_path(work_dir: str, seed: int, student: str, teacher: str, split: str) -> str:
    """Where the fidelity of run ``student`` to run ``teacher`` of ``seed`` on ``split`` is
    stored."""
    return osp.join(work_dir, f'seed{seed}', student, f'fidelity_{teacher}_{split}.json')


def fidelity_to_teacher(
    study: Study,
    results: Mapping[str, dict],
    work_dir: str,
    seed: int,
    student: str,
    teacher: str,
    via: str,
    *,
    split: str = 'test',
    epochs: int | None = None,
    options: Mapping[str, Any] | None = None,
    log: Callable[[str], None] = lambda line: print(line, flush=True),
) -> dict[str, float]:
    """The ``DistillFidelity`` keys of run ``student``'s checkpoint against run ``teacher``'s on
    ``split`` (module doc).

    Args:
        results: the seed's results by run (:func:`~mlkd.apis.study.run_study`'s
            ``results[seed]``), holding ``student``, ``teacher`` and ``via``.
        via: a distilled run of ``study`` taught by ``teacher``, whose config (its student
            network, its evaluators, data and preprocessing) the student is evaluated in.
        epochs, options: as the call of :func:`~mlkd.apis.study.run_study` that made the results.

    Raises:
        ValueError: ``via`` is not taught by ``teacher``; or the student's weights do not fit
            ``via``'s student network (naming the checkpoint and the keys).
    """
    from mlkd.engine.runner import build_runner
    from mlkd.models.utils import unwrap_model
    from mlkd.models.weights import load_network_checkpoint
    from mlkd.utils.atomic import write_json_atomic

    if study.runs[via].teacher != teacher:
        raise ValueError(
            f'{study.name}: the fidelity to {teacher!r} is measured in the config of a run it '
            f'taught, but run {via!r} is taught by {study.runs[via].teacher!r}'
        )
    key = {
        'student': results[student]['config_sha256'],
        'teacher': results[teacher]['config_sha256'],
        'via': results[via]['config_sha256'],
        'split': split,
    }
    path = fidelity_path(work_dir, seed, student, teacher, split)
    if osp.isfile(path):
        with open(path, encoding='utf-8') as file:
            stored = json.load(file)
        if stored.get('key') == key:
            return stored['fidelity']
    cfg = study.run_config(via, seed, work_dir, epochs=epochs, options=options)
    cfg.model.teacher_ckpt = results[teacher]['checkpoint']
    add_fidelity(cfg, (split,))
    cfg.load_from, cfg.resume = None, False  # the student's weights are loaded below
    cfg.work_dir = osp.join(work_dir, f'seed{seed}', student, f'fidelity_{teacher}')
    cfg.experiment_name = f'fidelity_{uuid.uuid4().hex[:6]}'
    cfg.log_level = 'ERROR'
    with quiet():
        runner = build_runner(cfg)
        load_network_checkpoint(
            unwrap_model(runner.model).student, results[student]['checkpoint'], 'student'
        )
        metrics = runner.val() if split == 'val' else runner.test()
    fidelity = fidelity_of(metrics)
    write_json_atomic(path, dict(key=key, fidelity=fidelity))
    log(
        f'[seed {seed}] {student} -> {teacher} ({split}): '
        + '  '.join(f'{name} {value:.3f}' for name, value in fidelity.items())
    )
    return fidelity
