"""Two CPU processes through tools/dist_train.sh equal one process with the same global batch.

With CUDA absent mlkd creates the gloo group itself (mmengine's launcher would call
torch.cuda.set_device) and wraps the model in CPU DDP. The comparison is made exact in
principle: GroupNorm instead of BatchNorm (no per-rank batch statistics), no random
augmentation (workers on two ranks draw different numbers), and the BCE-sum task loss scaled by
the world size so that DDP's gradient averaging gives the single-process sum. What remains is
floating-point summation order: each weight tensor agrees to 1% of its norm and the metrics to
0.5 points (observed: identical to the printed precision).
"""

import json
import os
import os.path as osp
import re
import subprocess
import textwrap

import pytest
from conftest import REPO, config_path, run_tool, write_tiny_distiller_config

TOLERANCE = 0.5  # mAP / F1 points


def _write_config(tmp_path, per_process_batch):
    path = tmp_path / f'dist_{per_process_batch}.py'
    path.write_text(
        textwrap.dedent(f"""
        _base_ = [{config_path('multidigits', 'resnet_student.py')!r}]
        model = dict(backbone=dict(norm_cfg=dict(type='GN', num_groups=4)))
        train_dataloader = dict(batch_size={per_process_batch}, num_workers=0,
                                persistent_workers=False,
                                dataset=dict(num_samples=256, pipeline=[dict(type='PackInputs')]))
        val_dataloader = dict(num_workers=0, persistent_workers=False,
                              dataset=dict(num_samples=128))
        test_dataloader = val_dataloader
        param_scheduler = [
            dict(type='OneCycleLR', eta_max=2e-3, total_steps=2, end=2, pct_start=0.2, by_epoch=True,
                 convert_to_iter_based=True),
            dict(type='OneCycleMomentum', total_steps=2, end=2, pct_start=0.2, by_epoch=True,
                 convert_to_iter_based=True),
        ]
        train_cfg = dict(max_epochs=2, val_interval=2)
        default_hooks = dict(checkpoint=dict(interval=1))
    """)
    )
    return str(path)


def _final_metrics(work_dir):
    scalars = []
    for root, _, files in os.walk(work_dir):
        scalars += [osp.join(root, f) for f in files if f == 'scalars.json']
    assert scalars, f'no scalars.json under {work_dir}'
    metrics = {}
    with open(scalars[0]) as f:
        for line in f:
            record = json.loads(line)
            if 'mAP' in record:
                metrics = record
    assert metrics, 'no validation metrics were logged'
    return metrics


def test_two_process_cpu_ddp_matches_single_process(tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS='1', PORT=str(29500 + os.getpid() % 1000))
    single_dir, dist_dir = str(tmp_path / 'single'), str(tmp_path / 'dist')
    single = run_tool('tools/train.py', _write_config(tmp_path, 32), '--work-dir', single_dir)
    assert single.returncode == 0, single.stderr[-3000:]
    dist = subprocess.run(
        ['bash', 'tools/dist_train.sh', _write_config(tmp_path, 16), '2', '--work-dir', dist_dir],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert dist.returncode == 0, dist.stderr[-3000:]
    log = dist.stdout + dist.stderr
    assert re.search(r'world_size: 2|Distributed launcher: pytorch', log) or 'gloo' in log
    # Same weights after training (the stronger check), and the same validation metrics.
    import torch

    single_state = torch.load(osp.join(single_dir, 'epoch_2.pth'), weights_only=False)
    dist_state = torch.load(osp.join(dist_dir, 'epoch_2.pth'), weights_only=False)
    moved = 0.0
    # Per tensor, relative to its norm: Adam divides by sqrt(v), so entries whose gradients are
    # ~0 turn summation-order noise into lr-sized steps; whole tensors stay within 1% (observed
    # worst case about 0.2%, on a GroupNorm bias).
    for key, value in single_state['state_dict'].items():
        if value.is_floating_point():
            gap = (dist_state['state_dict'][key] - value).norm() / value.norm().clamp(min=1e-12)
            assert gap < 1e-2, (key, float(gap))
    init_state = torch.load(osp.join(single_dir, 'epoch_1.pth'), weights_only=False)
    moved = max(
        (value - init_state['state_dict'][key]).abs().max().item()
        for key, value in single_state['state_dict'].items()
        if value.is_floating_point()
    )
    assert moved > 1e-3  # the second epoch changed the weights: the comparison is not vacuous
    single_metrics, dist_metrics = _final_metrics(single_dir), _final_metrics(dist_dir)
    for key in ('mAP', 'CF1_thr0.5', 'OF1_thr0.5'):
        assert abs(single_metrics[key] - dist_metrics[key]) <= TOLERANCE, (
            key,
            single_metrics[key],
            dist_metrics[key],
        )


@pytest.mark.parametrize(
    'name',
    [
        'BinaryCrossEntropySumLoss',
        'AsymmetricMultiLabelLoss',
        'AsymmetricFocalLoss',
        'SigmoidFocalLoss',
        'HillLoss',
        'SPLCLoss',
        'FocalMarginLoss',
        'TwoWayMultiLabelLoss',
    ],
)
def test_sum_reduced_task_loss_is_scaled_by_the_world_size(monkeypatch, name):
    import torch

    import mlkd.models.losses as losses
    import mlkd.models.losses.base as contracts

    loss = getattr(losses, name)()
    logits, target = torch.randn(4, 3), (torch.rand(4, 3) > 0.5).float()
    target[0, 0] = 1.0
    single = loss(logits, target)
    monkeypatch.setattr(contracts, 'get_world_size', lambda: 4)
    scale = 4 if loss.reduction == 'sum' else 1  # means (focal, Two-way) are not scaled
    torch.testing.assert_close(loss(logits, target), scale * single)
    loss.eval()  # evaluation losses are not used for gradients: no scaling
    torch.testing.assert_close(loss(logits, target), single)


def test_distiller_trains_under_two_process_cpu_ddp_with_fp16(tmp_path):
    """3D on MultiDigits through dist_train.sh: DDP with find_unused_parameters=False, a frozen
    teacher and the teacher evaluation hook, on two CPU processes, with fp16 autocast and dynamic
    loss scaling. (An fp32 twin of this run added nothing: the DDP wiring is the same, and fp32
    DDP training is what ``test_two_process_cpu_ddp_matches_single_process`` checks.)"""
    amp = ['--amp', '--cfg-options', 'optim_wrapper.dtype=float16']
    config = write_tiny_distiller_config(
        tmp_path / 'dist_3d.py',
        config_path('3d', '3d_multidigits.py'),
        """
        train_cfg = dict(max_epochs=1, val_interval=1)
        find_unused_parameters = False
        # batches of 4 per process: float16 convolutions are slow on a CPU
        train_dataloader = dict(batch_size=4, num_workers=0, persistent_workers=False,
                                dataset=dict(num_samples=16))
        val_dataloader = dict(num_workers=0, persistent_workers=False,
                              dataset=dict(num_samples=16))
        test_dataloader = val_dataloader
    """,
    )
    env = dict(os.environ, OMP_NUM_THREADS='1', PORT=str(30500 + os.getpid() % 1000))
    work = str(tmp_path / 'work')
    out = subprocess.run(
        ['bash', 'tools/dist_train.sh', str(config), '2', '--work-dir', work, *amp],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    metrics = _final_metrics(work)
    assert 'mAP' in metrics
    log = out.stdout + out.stderr
    assert 'teacher/mAP' in log and 'loss_pd' in log and 'loss_ndd' in log
    assert 'autocast cpu to torch.float16, loss scaling on' in log
