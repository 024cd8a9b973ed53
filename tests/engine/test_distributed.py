"""Two CPU processes through tools/dist_train.sh: the run equals one process with the same global
batch, and the teacher cache its ranks write trains one process exactly as the live teacher.

With CUDA absent mlkd creates the gloo group itself (mmengine's launcher would call
torch.cuda.set_device) and wraps the model in CPU DDP. Everything goes through the command line
as a user would type it: ``tools/dist_train.sh`` / ``tools/train.py`` with ``--cfg-options
model.teacher_cache.dir=... model.teacher_cache.mode=...`` (no ``+`` keys).
"""

import json
import os
import os.path as osp
import re
import subprocess
import textwrap

import pytest
import torch
from conftest import (
    MULTIDIGITS_3D,
    MULTIDIGITS_MLD,
    MULTIDIGITS_STUDENT,
    REPO,
    free_port,
    run_tool,
    write_tiny_distiller_config,
)

from mlkd.utils.checkpoint import load_local_checkpoint

TOLERANCE = 0.5  # mAP / F1 points


def _write_distiller_config(tmp_path) -> str:
    """MLD on MultiDigits (a BCE-sum task loss scaled by the world size, a distillation loss), 2
    epochs of 32 samples: one batch of 16 per rank, or of 32 in one process, per epoch.

    Made exact in principle between one and two processes: the student is the ResNet student
    with GroupNorm instead of BatchNorm (no per-rank batch statistics) and a linear head (an
    ML-Decoder's dropout draws other masks on two ranks than in one process, and the key bias of
    its attention has no gradient at all, so Adam turns summation noise into lr-sized steps of
    the whole tensor); augmentation needs nothing, as each sample's draw is keyed by its index
    and epoch, not by the rank that reads it. What remains is floating-point summation order."""
    student = tmp_path / 'student_gn.py'
    student.write_text(
        textwrap.dedent(f"""
        _base_ = [{MULTIDIGITS_STUDENT!r}]
        model = dict(backbone=dict(norm_cfg=dict(type='GN', num_groups=4)))
    """)
    )
    return write_tiny_distiller_config(
        tmp_path / 'dist_mld.py',
        MULTIDIGITS_MLD,
        f"""
        # (a config file's second ``model = ...`` replaces its first: the random teacher again)
        model = dict(student={str(student)!r}, teacher_ckpt=None, allow_random_teacher=True)
        # The recipe's peak learning rate at both steps (a 2-step one-cycle would end at ~0 and
        # leave the second epoch's weights where the first left them).
        param_scheduler = []
        train_cfg = dict(max_epochs=2, val_interval=2)
        randomness = dict(seed=5)
        default_hooks = dict(logger=dict(interval=1), checkpoint=dict(interval=1))
        train_dataloader = dict(batch_size=16, dataset=dict(num_samples=32))
        val_dataloader = dict(dataset=dict(num_samples=16))
        test_dataloader = val_dataloader
    """,
    )


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


def _dist_train(config: str, *args: str) -> str:
    env = dict(os.environ, OMP_NUM_THREADS='1', PYTHONPATH=REPO, PORT=str(free_port()))
    out = subprocess.run(
        ['bash', 'tools/dist_train.sh', config, '2', *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, (out.stdout + out.stderr)[-4000:]
    return out.stdout + out.stderr


def _weights(work_dir: str, epoch: int) -> dict[str, torch.Tensor]:
    checkpoint = load_local_checkpoint(osp.join(work_dir, f'epoch_{epoch}.pth'), map_location='cpu')
    return checkpoint['state_dict']


def test_two_processes_equal_one_and_their_teacher_cache_trains_one_exactly(tmp_path):
    """One 2-process run writes the teacher cache (each rank its own shard of every epoch); one
    process then trains live and from that cache (finding each sample's row by its index in both
    shards). The cached run equals the live one bit for bit, and the 2-process run equals the live
    one up to summation order: each weight tensor to 1% of its norm (Adam divides by sqrt(v), so
    entries whose gradients are ~0 turn summation-order noise into lr-sized steps; observed worst
    case about 0.2%) and the metrics to 0.5 points. Adam is blind to a common scale of all
    gradients, not to a wrong scale of one term: a task loss left unscaled by the world size
    beside the distillation loss would show."""
    config, cache = _write_distiller_config(tmp_path), str(tmp_path / 'cache')
    dist_dir = str(tmp_path / 'dist')
    log = _dist_train(
        config,
        '--work-dir',
        dist_dir,
        '--cfg-options',
        f'model.teacher_cache.dir={cache}',
        'model.teacher_cache.mode=write',
    )
    assert re.search(r'world_size: 2|Distributed launcher: pytorch', log) or 'gloo' in log
    manifest = json.load(open(osp.join(cache, 'manifest.json')))
    assert manifest['epochs'] == {
        '0': {'rows': 32, 'world_size': 2},
        '1': {'rows': 32, 'world_size': 2},
    }
    assert sorted(os.listdir(osp.join(cache, 'epoch_0001'))) == [
        'shard_00000_of_00002',
        'shard_00001_of_00002',
    ]
    work = {}
    for name, options in (
        ('live', []),
        ('read', [f'model.teacher_cache.dir={cache}', 'model.teacher_cache.mode=read']),
    ):
        work[name] = str(tmp_path / name)
        out = run_tool(
            'tools/train.py',
            config,
            '--work-dir',
            work[name],
            '--cfg-options',
            'train_dataloader.batch_size=32',
            *options,
        )
        assert out.returncode == 0, (out.stdout + out.stderr)[-4000:]
    live, read, dist = (_weights(work['live'], 2), _weights(work['read'], 2), _weights(dist_dir, 2))
    assert live.keys() == read.keys() == dist.keys()
    for key, value in live.items():
        assert torch.equal(read[key], value), key
        if value.is_floating_point():
            gap = (dist[key] - value).norm() / value.norm().clamp(min=1e-12)
            assert gap < 1e-2, (key, float(gap))
    # The second epoch moved the weights: the comparison is not vacuous.
    first = _weights(work['live'], 1)
    assert (
        max(
            (v - first[k]).abs().max().item()
            for k, v in live.items()
            if k.startswith('student.') and v.is_floating_point()
        )
        > 1e-3
    )
    live_metrics, dist_metrics = _final_metrics(work['live']), _final_metrics(dist_dir)
    for key in ('mAP', 'CF1_thr0.5', 'OF1_thr0.5'):
        assert abs(live_metrics[key] - dist_metrics[key]) <= TOLERANCE, (
            key,
            live_metrics[key],
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
    DDP training is what
    ``test_two_processes_equal_one_and_their_teacher_cache_trains_one_exactly`` checks.)"""
    amp = ['--amp', '--cfg-options', 'optim_wrapper.dtype=float16']
    config = write_tiny_distiller_config(
        tmp_path / 'dist_3d.py',
        MULTIDIGITS_3D,
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
    work = str(tmp_path / 'work')
    log = _dist_train(str(config), '--work-dir', work, *amp)
    metrics = _final_metrics(work)
    assert 'mAP' in metrics
    assert 'teacher/mAP' in log and 'loss_pd' in log and 'loss_ndd' in log
    assert 'autocast cpu to torch.float16, loss scaling on' in log
