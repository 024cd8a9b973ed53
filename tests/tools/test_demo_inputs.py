"""tools/demo.py refuses bad input before any training, as command-line errors (exit status 2).

What the refusals are: tests/apis/test_benchmark.py (mlkd.apis.benchmark)."""

import pytest
from conftest import load_tool

from mlkd.apis import protocol_of
from mlkd.apis.demo import DEMO
from mlkd.utils.atomic import write_json_atomic

demo = load_tool('demo')


@pytest.fixture
def no_training(monkeypatch):
    monkeypatch.setattr('mlkd.apis.benchmark.run_tasks', lambda *a, **k: pytest.fail('ran'))


@pytest.mark.parametrize(
    'args, message',
    [
        (['--seeds', '0', '1', '0'], 'lists a seed twice'),
        (['--seeds', '0', '-1'], 'must be non-negative'),
        (['--stages', 'teacher', 'teacher'], 'lists a stage twice'),
        (['--stages', 'teacher', 'Distill'], "['Distill'] are not stages of MultiDigits"),
        (
            ['--benchmark', 'multi-teacher', '--stages', 'L2D-both'],
            'distilled stages need a teacher: add the teacher-0to6 stage',
        ),
        (
            ['--benchmark', 'multi-teacher', '--teacher-ckpt', 't.pth'],
            '--teacher-ckpt gives one teacher, but MultiDigits, two teachers',
        ),
        (['--resume', '--overwrite'], 'pick one'),
        (['--jobs', '0'], '--jobs must be at least 1'),
        (['--stages', 'KD'], 'distilled stages need a teacher'),
    ],
)
def test_bad_seeds_and_stages_are_refused(tmp_path, capsys, no_training, args, message):
    with pytest.raises(SystemExit) as exit_info:
        demo.main(['--work-dir', str(tmp_path), *args])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_another_protocols_results_stop_the_tool_naming_the_file(tmp_path, no_training):
    work = str(tmp_path)
    path = str(tmp_path / 'seed0' / 'student' / 'result.json')
    protocol = dict(protocol_of(DEMO, ['student'], {}, work), commit='0' * 40)
    write_json_atomic(path, dict(val={}, test={}, seed=0, protocol=protocol))
    with pytest.raises(SystemExit, match=f'demo.py: {path} holds results of another protocol'):
        demo.main(['--work-dir', work, '--stages', 'student', '--resume'])


def test_a_teacher_checkpoint_that_does_not_fit_is_refused_before_training(
    tmp_path, capsys, no_training
):
    """A student's checkpoint (or a missing file) as --teacher-ckpt: refused by name before the
    student stage trains, not after."""
    import torch

    from mlkd.apis.inference import build_classifier
    from mlkd.utils.config_paths import resolve_config_path

    student, _, _ = build_classifier(resolve_config_path('mlkd::demo/student.py'))
    path = str(tmp_path / 'student.pth')
    torch.save({'state_dict': student.state_dict()}, path)
    for checkpoint, message in (
        (path, f"'{path}' does not fit the --teacher-ckpt (the teacher stage) model"),
        (str(tmp_path / 'no.pth'), 'checkpoint file not found'),
    ):
        with pytest.raises(SystemExit) as exit_info:
            demo.main(['--work-dir', str(tmp_path / 'w'), '--teacher-ckpt', checkpoint])
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / 'w').exists()
