"""mlkd.apis.results: which runs are seeds of one setting (the tables themselves:
tests/tools/analysis_tools/test_logs.py, collect_results.py on real runs)."""

import json
import os
import os.path as osp

import pytest
from mmengine.config import Config

from mlkd.apis import DEMO
from mlkd.apis.results import group_runs, read_run


def _demo_run(root, seed: int, **options) -> str:
    """A work dir as a demo KD stage of ``seed`` leaves it: the dumped config (seeded at the
    config's seed_key, reading the seed's teacher cache) and a one-epoch scalar log."""
    work_dir = osp.join(str(root), f'seed{seed}', 'KD')
    cfg = DEMO.stage_config('KD', work_dir, seed, {'teacher': 'teacher.pth'}, options or None)
    logs = osp.join(work_dir, '20260101_000000', 'vis_data')
    os.makedirs(logs)
    # The text mmengine dumps, without its yapf formatting (seconds, and nothing read depends on it)
    Config(cfg.to_dict(), format_python_code=False).dump(osp.join(work_dir, 'kd.py'))
    with open(osp.join(logs, 'scalars.json'), 'w') as f:
        f.write(json.dumps(dict(loss=1.0, loss_kd=0.5, epoch=1, iter=4, step=4)) + '\n')
        f.write(json.dumps({'mAP': 50.0 + seed, 'step': 1}) + '\n')
    return work_dir


def test_demo_seeds_are_grouped_by_the_configs_seed_key(tmp_path):
    """The demo seeds train_dataloader.sampler.seed and gives each seed its own teacher cache:
    its runs of one stage are seeds of one setting, the seed read where the config puts it."""
    runs = [read_run(_demo_run(tmp_path / 'demo', seed)) for seed in (0, 1)]
    assert [run.seed for run in runs] == [0, 1]
    (group,) = group_runs(runs)
    assert [run.seed for run in group] == [0, 1]
    # Anything else that differs is not a seed: refused, naming the key.
    other = read_run(
        _demo_run(tmp_path / 'other', 2, **{'model.distill_losses.kd.loss_weight': 3.0})
    )
    with pytest.raises(ValueError, match=r'differ in more than the seed.*kd\.loss_weight'):
        group_runs([*runs, other])


def test_the_best_of_a_distance_is_its_lowest_and_a_mean_over_fewer_seeds_says_so(tmp_path):
    from mlkd.apis.results import grouped_table

    work_dirs = [_demo_run(tmp_path / 'demo', seed) for seed in (0, 1, 2)]
    logs = osp.join(work_dirs[0], '20260101_000000', 'vis_data', 'scalars.json')
    with open(logs, 'a') as f:  # epochs 1-3 of seed 0: KL to the teacher 0.9, 0.5, 0.2
        for step, kl in ((1, 0.9), (2, 0.5), (3, 0.2)):
            f.write(json.dumps({'fidelity/kl': kl, 'mAP': 50.0, 'step': step}) + '\n')
    run = read_run(work_dirs[0])
    assert run.metric('fidelity/kl') == (0.2, (3, 0.2))
    assert run.metric('mAP')[1][1] == 50.0
    (group,) = group_runs([read_run(w) for w in work_dirs])
    _, rows, _, _ = grouped_table([group], ['mAP', 'fidelity/kl'])
    assert rows[0][-3:-1] == ['0.20 (n=1)', '0.20 (n=1)']  # one of three seeds logged it


def test_a_multi_teacher_run_names_its_teachers_and_method(tmp_path):
    """Its teachers and losses are per teacher (model.teachers.<name>): the table had shown
    'teacher -', 'student MultiTeacherDistiller', 'method -'."""
    from mlkd.apis import MULTI_TEACHER

    work_dir = str(tmp_path / 'seed0' / 'L2D-both')
    ckpts = {'low': 'low.pth', 'high': 'high.pth'}
    cfg = MULTI_TEACHER.stage_config('L2D-both', work_dir, 0, ckpts)
    logs = osp.join(work_dir, '20260101_000000', 'vis_data')
    os.makedirs(logs)
    Config(cfg.to_dict(), format_python_code=False).dump(osp.join(work_dir, 'l2d.py'))
    with open(osp.join(logs, 'scalars.json'), 'w') as f:
        f.write(json.dumps(dict(loss=1.0, epoch=1, iter=4, step=4)) + '\n')
    run = read_run(work_dir)
    assert set(run.teacher.split(' + ')) == {'teacher_digits0to6', 'teacher_digits3to9'}
    assert 'MultiTeacherDistiller' not in run.student
    assert set(run.method.split('+')) == {'mld', 'led'}
