"""tools/demo.py refuses bad input before any training: seeds, stages, another protocol's results."""

import json
import os.path as osp
import sys

import pytest
from conftest import REPO

sys.path.insert(0, osp.join(REPO, 'tools'))
import demo  # noqa: E402

sys.path.remove(osp.join(REPO, 'tools'))


def run_demo(monkeypatch, *args: str) -> None:
    monkeypatch.setattr(sys, 'argv', ['demo.py', *args])
    # Training must never start: any call to it fails the test.
    monkeypatch.setattr(demo, 'train_and_evaluate', lambda *a, **k: pytest.fail('trained'))
    demo.main()


@pytest.mark.parametrize(
    'args, message',
    [
        (['--seeds', '0', '1', '0'], 'lists a seed twice'),
        (['--seeds', '0', '-1'], 'must be non-negative'),
        (['--stages', 'teacher', 'teacher'], 'lists a stage twice'),
        (['--stages', 'teacher', 'Distill'], "invalid choice: 'Distill'"),
        (['--resume', '--overwrite'], 'pick one'),
        (['--jobs', '0'], '--jobs must be at least 1'),
    ],
)
def test_bad_seeds_and_stages_are_refused(monkeypatch, tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as exit_info:
        run_demo(monkeypatch, '--work-dir', str(tmp_path), *args)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def write_result(work_dir: str, protocol: dict, seed: int = 0, stage: str = 'student') -> str:
    path = osp.join(work_dir, f'seed{seed}', stage, 'result.json')
    demo.write_json_atomic(
        path, dict(val={}, test={}, seed=seed, protocol=protocol, seconds=1.0, checkpoint='x.pth')
    )
    return path


def test_results_of_another_commit_or_config_are_refused_even_with_resume(monkeypatch, tmp_path):
    work = str(tmp_path)
    here = demo.protocol_of(['student'], [0], {}, work)
    write_result(work, dict(here, commit='0' * 40))
    for extra in ([], ['--resume']):
        with pytest.raises(SystemExit, match="another protocol: commit '0000000000"):
            run_demo(monkeypatch, '--work-dir', work, '--stages', 'student', *extra)
    # Same commit, the student trained with another config (here: another epoch count).
    write_result(work, here)
    with pytest.raises(SystemExit, match='another protocol: the student config'):
        run_demo(
            monkeypatch,
            '--work-dir',
            work,
            '--stages',
            'student',
            '--resume',
            '--cfg-options',
            'train_cfg.max_epochs=3',
        )
    # Distilled results made with another (given) teacher are another protocol's.
    given = demo.protocol_of(['student', 'KD'], [0], {}, work, 'other_teacher.pth')['configs']
    trained = demo.protocol_of(['student', 'KD'], [0], {}, work)['configs']
    assert given['student'] == trained['student'] and given['KD'] != trained['KD']
    # A results.json of another protocol is refused as well.
    demo.write_json_atomic(
        osp.join(work, 'results.json'), dict(protocol=dict(here, commit='f' * 40))
    )
    with pytest.raises(SystemExit, match='results.json holds results of another protocol'):
        run_demo(monkeypatch, '--work-dir', work, '--stages', 'student', '--resume')


def test_finished_stages_are_neither_retrained_nor_overwritten_silently(
    monkeypatch, tmp_path, capsys
):
    work = str(tmp_path)
    write_result(work, demo.protocol_of(['student'], [0], {}, work))
    with pytest.raises(SystemExit):
        run_demo(monkeypatch, '--work-dir', work, '--stages', 'student')
    assert 'pass --resume to reuse them or --overwrite' in capsys.readouterr().err


def test_validate_results_names_the_stage_and_seed_at_fault():
    metrics = {m: 90.0 for m in demo.METRICS}
    good = dict(
        seeds=[3, 4],
        stages=['teacher', 'student'],
        protocol={},
        teacher_ckpt='t.pth',
        results=dict(
            teacher=[dict(seed=3, val=metrics, test=metrics)],
            student=[
                dict(seed=3, val=metrics, test=metrics),
                dict(seed=4, val=metrics, test=metrics),
            ],
        ),
    )
    demo.validate_results(good)
    bad = json.loads(json.dumps(good))
    del bad['results']['student'][1]['test']['mAP']
    with pytest.raises(ValueError, match=r"stage 'student' seed 4: test metrics \['mAP'\]"):
        demo.validate_results(bad)
    bad = json.loads(json.dumps(good))
    bad['results']['student'].pop()
    with pytest.raises(ValueError, match=r"stage 'student' has seeds \[3\], expected \[3, 4\]"):
        demo.validate_results(bad)
