"""Config values that cannot be right are refused before training, naming the key and the value
(mlkd/utils/config_values.py, as tools/train.py applies it); and the launch scripts' variables."""

import os
import os.path as osp
import subprocess

import pytest
from conftest import MULTIDIGITS_3D, MULTIDIGITS_STUDENT, REPO, load_tool
from mmengine.config import Config

from mlkd.utils.config_values import ConfigValueError, check_config_values


@pytest.mark.parametrize(
    'config,option,message',
    [
        (
            MULTIDIGITS_STUDENT,
            'train_cfg.max_epochs=-3',
            'train_cfg.max_epochs=-3 is invalid: the number of '
            'epochs / iterations cannot be negative',
        ),
        (
            MULTIDIGITS_STUDENT,
            'train_cfg.max_epochs=one',
            "train_cfg.max_epochs='one' is invalid: it counts epochs / iterations: an integer",
        ),
        (
            MULTIDIGITS_STUDENT,
            'train_cfg.val_interval=0',
            'train_cfg.val_interval=0 is invalid: validate '
            'every N epochs (iterations) needs a positive integer N',
        ),
        (
            MULTIDIGITS_STUDENT,
            'param_scheduler.0.eta_max=-0.1',
            'param_scheduler.0.eta_max=-0.1 is invalid: '
            'a learning rate must be finite and not negative',
        ),
        (
            MULTIDIGITS_3D,
            'model.distill_losses.pd.temperature=-2.0',
            'model.distill_losses.pd.temperature'
            '=-2.0 is invalid: a temperature divides the logits, it must be positive',
        ),
        (
            MULTIDIGITS_3D,
            'model.distill_losses.pd.loss_weight=-1.0',
            'model.distill_losses.pd.loss_weight'
            '=-1.0 is invalid: a loss weight must be finite and not negative',
        ),
    ],
)
def test_impossible_values_are_refused_before_anything_is_written(
    tmp_path, config, option, message
):
    train = load_tool('train')
    args = train.parse_args([config, '--work-dir', str(tmp_path / 'work'), '--cfg-options', option])
    with pytest.raises(ConfigValueError) as error:
        train.build_cfg(args)
    assert str(error.value).startswith(f'config value {message}')
    assert not osp.exists(tmp_path / 'work')


def test_a_pipeline_without_the_packing_transform_is_named():
    cfg = Config.fromfile(MULTIDIGITS_STUDENT)
    check_config_values(cfg)  # as shipped: fine
    cfg.val_dataloader.dataset.pipeline = [dict(type='RandomFlip', prob=0.5)]
    with pytest.raises(
        ConfigValueError,
        match=r'val_dataloader.dataset.pipeline ends with '
        r"'RandomFlip', not a packing transform: add "
        r"dict\(type='PackInputs'\)",
    ):
        check_config_values(cfg)
    cfg.val_dataloader.dataset.pipeline = []
    with pytest.raises(ConfigValueError, match='val_dataloader.dataset.pipeline is empty'):
        check_config_values(cfg)


def test_a_batch_larger_than_the_dataset_with_drop_last_is_named(tmp_path):
    """mmengine failed with an assertion about the scheduler; now the loader is named."""
    train = load_tool('train')
    with pytest.raises(
        ConfigValueError,
        match=r'train_dataloader.batch_size=64 with '
        r'drop_last=True gives no batch: the dataset '
        r'\(MultiDigits\) has 16 samples',
    ):
        train.main(
            [
                MULTIDIGITS_STUDENT,
                '--work-dir',
                str(tmp_path / 'work'),
                '--no-validate',
                '--cfg-options',
                'train_dataloader.dataset.num_samples=16',
                'train_dataloader.batch_size=64',
                'train_dataloader.drop_last=True',
                'train_dataloader.num_workers=0',
                'train_dataloader.persistent_workers=False',
            ]
        )
    assert not [f for f in os.listdir(tmp_path / 'work') if f.endswith('.pth')]


@pytest.mark.parametrize('shape', [['0'], ['0', '32'], ['3', '-1', '32']])
def test_get_flops_refuses_a_zero_or_negative_shape(shape, monkeypatch):
    monkeypatch.syspath_prepend(osp.join(REPO, 'tools', 'analysis_tools'))
    if len(shape) == 1:
        shape = shape * 2
    get_flops = load_tool('analysis_tools/get_flops')
    with pytest.raises(ValueError, match=r'--shape sizes must be positive integers, got '):
        get_flops.main([MULTIDIGITS_STUDENT, '--shape', *shape])


@pytest.mark.parametrize(
    'variable,value,message',
    [
        ('NNODES', 'two', "NNODES must be a positive integer (number of nodes), got 'two'"),
        ('NNODES', '0', "NNODES must be a positive integer (number of nodes), got '0'"),
        ('NODE_RANK', '1', "NODE_RANK must be an integer in 0..0 (NNODES=1), got '1'"),
        ('PORT', 'http', "PORT must be an integer in 1..65535, got 'http'"),
    ],
)
@pytest.mark.parametrize(
    'script,args', [('dist_train.sh', ['CONFIG']), ('dist_test.sh', ['CONFIG', 'CKPT'])]
)
def test_dist_scripts_validate_the_multi_node_variables(script, args, variable, value, message):
    out = subprocess.run(
        ['bash', osp.join(REPO, 'tools', script), *args, '1'],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, variable: value},
    )
    assert out.returncode == 2 and message in out.stderr, out.stderr


def test_a_schedule_longer_than_the_training_is_warned_about():
    """The quick try of the docs (--cfg-options train_cfg.max_epochs=1) stops a 12-epoch one-cycle
    schedule in its warm-up: said, not refused; a schedule cut to the training is silent."""
    from mlkd.utils.config_values import warn_cut_schedule

    cfg = Config.fromfile(MULTIDIGITS_STUDENT)
    cfg.train_cfg.max_epochs = 1
    with pytest.warns(
        UserWarning, match=r'param_scheduler\[0\] \(OneCycleLRWithMultipliers\) runs to epoch 12, '
    ):
        texts = warn_cut_schedule(cfg)
    assert len(texts) == 2  # the learning rate's and the momentum's cycles
    for scheduler in cfg.param_scheduler:
        scheduler.update(end=1, total_steps=1)
    assert warn_cut_schedule(cfg) == []


def test_a_cfg_option_without_a_value_is_refused_by_name(capsys):
    train = load_tool('train')
    with pytest.raises(SystemExit) as exit_info:
        train.parse_args([MULTIDIGITS_STUDENT, '--cfg-options', 'train_cfg.max_epochs'])
    assert exit_info.value.code == 2
    assert "--cfg-options: 'train_cfg.max_epochs' is not KEY=VALUE" in capsys.readouterr().err
