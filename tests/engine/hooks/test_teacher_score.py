"""TeacherScoreHook: a distiller scores its teacher on evaluated data only while a metric reads it;
tools/test.py --teacher gives a plain student the same fidelity keys."""

import numpy as np
import pytest
import torch
from conftest import (
    MULTIDIGITS_3D,
    MULTIDIGITS_STUDENT,
    MULTIDIGITS_TEACHER,
    SMALL_TOOL_RUN,
    run_tool,
    small_run_cfg,
)
from mmengine.runner import Runner

from mlkd.engine import build_runner
from mlkd.evaluation.metrics import fidelity_metrics, load_score_dump

FIDELITY = dict(type='DistillFidelity')


def _runner(work_dir: str, config: str, evaluator: list) -> Runner:
    cfg = small_run_cfg(config, work_dir, epochs=1, train_samples=32, val_samples=20)
    if 'teacher_ckpt' in cfg.model:
        cfg.model.teacher_ckpt, cfg.model.allow_random_teacher = None, True
    cfg.val_evaluator = evaluator
    return build_runner(cfg)


def test_val_scores_the_teacher_only_when_a_metric_reads_it(tmp_path):
    runner = _runner(
        str(tmp_path / 'a'), MULTIDIGITS_3D, [dict(type='MultiLabelMetrics'), FIDELITY]
    )
    model = runner.model
    calls = []
    model.teacher.register_forward_hook(lambda *args: calls.append(1))
    metrics = runner.val()
    assert len(calls) == 1  # one batch of 20
    assert model.eval_teacher_score is False  # switched off after the loop
    # The keys equal the fidelity of the student's sigmoid scores to the teacher's own.
    data = model.data_preprocessor(next(iter(runner.val_dataloader)), False)
    with torch.no_grad():
        student = torch.sigmoid(model.student(data['inputs'], mode='tensor'))
        teacher = torch.sigmoid(model.teacher(data['inputs'], mode='tensor'))
    for key, value in fidelity_metrics(student, teacher).items():
        assert metrics[f'fidelity/{key}'] == pytest.approx(value, rel=1e-5, nan_ok=True), key
    assert 'mAP' in metrics

    plain = _runner(str(tmp_path / 'b'), MULTIDIGITS_3D, [dict(type='MultiLabelMetrics')])
    calls.clear()
    plain.model.teacher.register_forward_hook(lambda *args: calls.append(1))
    plain.val()
    assert calls == []  # no metric reads the teacher: no teacher forward


def test_a_plain_classifier_with_the_metric_is_refused_naming_the_way_out(tmp_path):
    runner = _runner(str(tmp_path), MULTIDIGITS_STUDENT, [FIDELITY])
    with pytest.raises(TypeError, match=r'DistillFidelity.*tools/test.py.*--teacher'):
        runner.val()


def test_test_tool_scores_a_plain_student_against_a_teacher(
    student_run, multidigits_teacher_ckpt, tmp_path
):
    """The wrapped student predicts exactly what it predicts alone, and gets the fidelity keys."""
    dumps = {}
    for name, extra in (
        ('alone', []),
        ('teacher', ['--teacher', MULTIDIGITS_TEACHER, multidigits_teacher_ckpt]),
    ):
        dumps[name] = str(tmp_path / f'{name}.npz')
        out = run_tool(
            'tools/test.py',
            MULTIDIGITS_STUDENT,
            student_run['checkpoint'],
            '--work-dir',
            str(tmp_path / name),
            '--out',
            dumps[name],
            *extra,
            '--cfg-options',
            *SMALL_TOOL_RUN,
        )
        assert out.returncode == 0, out.stderr[-3000:]
        assert ('fidelity/mAP_vs_teacher' in out.stdout + out.stderr) == (name == 'teacher')
    alone, scored = load_score_dump(dumps['alone']), load_score_dump(dumps['teacher'])
    np.testing.assert_array_equal(alone['scores'], scored['scores'])

    out = run_tool(
        'tools/test.py',
        MULTIDIGITS_3D,
        student_run['checkpoint'],
        '--teacher',
        MULTIDIGITS_TEACHER,
        'x',
    )
    assert out.returncode != 0 and 'plain classifier' in out.stderr
