"""print_config, get_flops, browse_dataset, slurm_test.sh and train.py --vis-backend, as run."""

import importlib.util
import os
import os.path as osp
import subprocess

import pytest
from conftest import (
    MULTIDIGITS_3D,
    MULTIDIGITS_STUDENT,
    REPO,
    SMALL_TOOL_RUN,
    TOOL_RUN_CONFIG,
    assert_png,
    config_path,
    read_scalars,
    run_tool,
)
from mmengine.config import Config


def test_print_config_resolves_bases_and_cfg_options(tmp_path):
    out = str(tmp_path / 'resolved.py')
    result = run_tool(
        'tools/misc/print_config.py',
        'mlkd::3d/3d_multidigits.py',
        '--cfg-options',
        'train_cfg.max_epochs=3',
        'model.distill_losses.pd.temperature=2.5',
        '--out',
        out,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    expected = Config.fromfile(MULTIDIGITS_3D)
    expected.merge_from_dict(
        {'train_cfg.max_epochs': 3, 'model.distill_losses.pd.temperature': 2.5}
    )
    printed = result.stdout.split('\n', 1)[1].rsplit('written to', 1)[0]
    assert printed.strip() == expected.pretty_text.strip()
    resolved = Config.fromfile(out)
    assert resolved.to_dict() == expected.to_dict()
    assert (
        resolved.train_cfg.max_epochs == 3 and resolved.model.distill_losses.pd.temperature == 2.5
    )
    assert '_base_ =' not in result.stdout  # every base merged


def test_get_flops_of_a_distiller_and_a_hand_counted_classifier(tmp_path):
    result = run_tool('tools/analysis_tools/get_flops.py', TOOL_RUN_CONFIG, '--style', 'markdown')
    assert result.returncode == 0, result.stderr[-3000:]
    rows = {
        r[0]: r[1:]
        for r in (
            [c.strip() for c in line.strip('|').split('|')]
            for line in result.stdout.splitlines()
            if line.startswith('| ')
        )
    }
    from mmengine.registry import init_default_scope

    from mlkd.registry import MODELS

    init_default_scope('mlkd')
    for role in ('teacher', 'student'):
        model = MODELS.build(
            Config.fromfile(config_path('multidigits', f'mldecoder_{role}.py')).model
        )
        params = sum(p.numel() for p in model.parameters())
        assert rows[role][1].split()[0] == str(params)
        assert rows[role][3] == '3x32x32'  # the distiller's probe_input_size
    teacher_flops = int(rows['teacher'][2].split()[0])
    student_flops = int(rows['student'][2].split()[0])
    assert rows['student / teacher'][2] == f'{student_flops / teacher_flops:.3f}'

    # LeNet-5 on a 1x32x32 image, counted by hand in multiply-adds: conv 1->6 (5x5) at 28x28,
    # conv 6->16 at 10x10, conv 16->120 at 1x1, linear 120->84, linear 84->10
    lenet = tmp_path / 'lenet.py'
    lenet.write_text(
        "_base_ = ['mlkd::_base_/default_runtime.py']\n"
        "model = dict(type='ImageClassifier', backbone=dict(type='LeNet5', "
        'num_classes=10), neck=None, head=None)\n'
    )
    result = run_tool(
        'tools/analysis_tools/get_flops.py',
        str(lenet),
        '--shape',
        '1',
        '32',
        '32',
        '--style',
        'markdown',
    )
    assert result.returncode == 0, result.stderr[-3000:]
    hand = 6 * 28 * 28 * 25 + 16 * 10 * 10 * 6 * 25 + 120 * 16 * 25 + 120 * 84 + 84 * 10
    params = (
        (6 * 25 + 6) + (16 * 6 * 25 + 16) + (120 * 16 * 25 + 120) + (120 * 84 + 84) + (84 * 10 + 10)
    )
    assert f'| model | ImageClassifier | {params} ' in result.stdout
    assert f'| {hand} (' in result.stdout
    assert '(not counted): aten::avg_pool2d x2, aten::tanh x4' in result.stdout


def test_browse_dataset_shows_both_views_of_a_two_view_pipeline(tmp_path):
    config = tmp_path / 'two_views.py'
    config.write_text(
        "_base_ = ['mlkd::3d/3d_multidigits.py']\n"
        'model = dict(views=dict(teacher=0, student=1))\n'
        "data_preprocessor = dict(type='MultiViewClsDataPreprocessor')\n"
        'train_dataloader = dict(dataset=dict(pipeline=[\n'
        "    dict(type='MultiView', num_views=[1, 1], transforms=[\n"
        "        [dict(type='RandomFlip', prob=0.5, direction='horizontal')],\n"
        "        [dict(type='RandomCrop', crop_size=24), dict(type='RandomFlip', prob=0.5)]]),\n"
        "    dict(type='PackInputs')]))\n"
    )
    out = str(tmp_path / 'train.png')
    result = run_tool(
        'tools/visualization/browse_dataset.py',
        str(config),
        '--num',
        '6',
        '--cols',
        '3',
        '--out',
        out,
        '--cfg-options',
        'train_dataloader.dataset.num_samples=16',
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert_png(out)
    from mlkd.datasets import MultiDigits

    dataset = MultiDigits(
        split='train', variant='multi_label', num_samples=16, image_size=32, seed=0, pipeline=[]
    )
    for index in range(6):
        names = ', '.join(str(c) for c in dataset.get_data_info(index)['gt_label'])
        assert f'#{index}: {names} (2 views)' in result.stdout
    assert '6 samples of the train pipeline' in result.stdout


def test_slurm_test_script_runs_test_py_under_srun(tmp_path):
    fake_bin = tmp_path / 'bin'
    fake_bin.mkdir()
    srun = fake_bin / 'srun'
    srun.write_text('#!/bin/sh\necho "srun $*"\n')
    srun.chmod(0o755)
    env = {
        **os.environ,
        'PATH': f'{fake_bin}:{os.environ["PATH"]}',
        'GPUS': '4',
        'GPUS_PER_NODE': '2',
    }
    result = subprocess.run(
        ['bash', 'tools/slurm_test.sh', 'gpu', 'job1', 'CFG.py', 'CKPT.pth', '--out', 'r.npz'],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        f'srun -p gpu --job-name=job1 --gres=gpu:2 --ntasks=4 --ntasks-per-node=2 '
        f'--cpus-per-task=5 --kill-on-bad-exit=1 python -u {REPO}/tools/test.py CFG.py CKPT.pth '
        f'--out r.npz --launcher slurm'
    )
    result = subprocess.run(
        ['bash', 'tools/slurm_train.sh', 'gpu', 'job2', 'CFG.py', 'wd'],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
    )
    assert result.stdout.strip().endswith(
        f'python -u {REPO}/tools/train.py CFG.py --work-dir=wd --launcher slurm'
    )
    result = subprocess.run(
        ['bash', 'tools/slurm_test.sh', 'gpu'], capture_output=True, text=True, cwd=REPO, env=env
    )
    assert result.returncode == 2 and 'usage:' in result.stderr


def test_train_vis_backend_tensorboard(tmp_path):
    """With tensorboard the run logs there too (and still to scalars.json); without it train.py
    stops before creating the work dir and says what to install."""
    work = str(tmp_path / 'work')
    result = run_tool(
        'tools/train.py',
        MULTIDIGITS_STUDENT,
        '--work-dir',
        work,
        '--vis-backend',
        'tensorboard',
        '--cfg-options',
        *SMALL_TOOL_RUN,
    )
    if (
        importlib.util.find_spec('tensorboard') is None
        and importlib.util.find_spec('tensorboardX') is None
    ):
        assert result.returncode != 0
        assert "--vis-backend tensorboard needs the 'tensorboard' package" in result.stderr
        assert 'pip install tensorboard' in result.stderr
        assert not osp.exists(work)
        return
    assert result.returncode == 0, result.stderr[-3000:]
    found = [name for _, _, files in os.walk(work) for name in files]
    assert any(name.startswith('events.out.tfevents') for name in found), found
    assert any('mAP' in line for line in read_scalars(work))


def test_train_vis_backend_config():
    """The flag's backends join the local one in the visualizer the Runner builds."""
    from mlkd.utils.cli import set_vis_backends

    cfg = Config.fromfile(MULTIDIGITS_3D)
    set_vis_backends(cfg, ['local', 'local'])
    assert cfg.visualizer.vis_backends == [dict(type='LocalVisBackend')]
    with pytest.raises(ValueError, match="unknown --vis-backend 'mlflow'"):
        set_vis_backends(cfg, ['mlflow'])
    cfg.experiment_name = 'run1'
    if importlib.util.find_spec('wandb') is None:
        with pytest.raises(
            ModuleNotFoundError,
            match="--vis-backend wandb needs the 'wandb' "
            r'package, which is not installed: pip install wandb',
        ):
            set_vis_backends(cfg, ['wandb'])
        assert cfg.visualizer.vis_backends == [dict(type='LocalVisBackend')]  # unchanged
    else:
        set_vis_backends(cfg, ['wandb'])
        assert cfg.visualizer.vis_backends == [
            dict(type='LocalVisBackend'),
            dict(type='WandbVisBackend', init_kwargs=dict(project='mlkd', name='run1')),
        ]


def test_get_flops_counts_each_teacher_of_a_multi_teacher_distiller_on_its_own():
    """It had counted one 'model' row: the student's FLOPs beside every network's parameters."""
    from conftest import load_tool

    from mlkd.utils.cli import load_config

    model = load_config('mlkd::multi_teacher/l2d_two_teachers.py').model
    roles = [role for role, _ in load_tool('analysis_tools/get_flops').networks(model)]
    assert roles == [f'teacher {name}' for name in model.teachers] + ['student']
