"""A teacher cache written by two CPU processes (gloo DDP) trains one process exactly as live.

Each rank writes its own shard of every epoch; the single-process run finds each sample's row by
its index in both shards. Everything goes through the command line as a user would type it:
``tools/dist_train.sh`` / ``tools/train.py`` with ``--cfg-options model.teacher_cache.dir=...
model.teacher_cache.mode=...`` (no ``+`` keys).
"""

import json
import os
import os.path as osp
import subprocess

import torch
from conftest import REPO, config_path, free_port, run_tool, write_tiny_distiller_config


def _write_config(tmp_path):
    return write_tiny_distiller_config(
        tmp_path / 'cache_dist.py',
        config_path('mld', 'mld_multidigits.py'),
        """
        param_scheduler = [
            dict(type='OneCycleLR', eta_max=2e-3, total_steps=2, end=2, pct_start=0.2,
                 by_epoch=True, convert_to_iter_based=True),
            dict(type='OneCycleMomentum', total_steps=2, end=2, pct_start=0.2, by_epoch=True,
                 convert_to_iter_based=True),
        ]
        train_cfg = dict(max_epochs=2, val_interval=2)
        randomness = dict(seed=5)
        default_hooks = dict(logger=dict(interval=1), checkpoint=dict(interval=2))
        custom_hooks = [dict(type='TeacherCacheHook')]
        # 32 samples: one batch of 16 per rank, or of 32 in one process, per epoch
        train_dataloader = dict(batch_size=16, num_workers=0, persistent_workers=False,
                                dataset=dict(num_samples=32))
        val_dataloader = dict(num_workers=0, persistent_workers=False,
                              dataset=dict(num_samples=16))
        test_dataloader = val_dataloader
    """,
    )


def _run(command, env):
    out = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, (out.stdout + out.stderr)[-4000:]
    return out


def test_two_process_write_then_one_process_read_equals_live(tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS='1', PYTHONPATH=REPO, PORT=str(free_port()))
    config, cache = _write_config(tmp_path), str(tmp_path / 'cache')
    _run(
        [
            'bash',
            'tools/dist_train.sh',
            config,
            '2',
            '--work-dir',
            str(tmp_path / 'write'),
            '--cfg-options',
            f'model.teacher_cache.dir={cache}',
            'model.teacher_cache.mode=write',
        ],
        env,
    )
    manifest = json.load(open(osp.join(cache, 'manifest.json')))
    assert manifest['epochs'] == {
        '0': {'rows': 32, 'world_size': 2},
        '1': {'rows': 32, 'world_size': 2},
    }
    assert sorted(os.listdir(osp.join(cache, 'epoch_0001'))) == [
        'shard_00000_of_00002',
        'shard_00001_of_00002',
    ]
    runs = {}
    for name, options in (
        ('live', []),
        ('read', [f'model.teacher_cache.dir={cache}', 'model.teacher_cache.mode=read']),
    ):
        work_dir = str(tmp_path / name)
        out = run_tool(
            'tools/train.py',
            config,
            '--work-dir',
            work_dir,
            '--cfg-options',
            'train_dataloader.batch_size=32',
            *options,
        )
        assert out.returncode == 0, (out.stdout + out.stderr)[-4000:]
        runs[name] = torch.load(osp.join(work_dir, 'epoch_2.pth'), weights_only=False)
    live, read = runs['live']['state_dict'], runs['read']['state_dict']
    assert live.keys() == read.keys()
    for key, value in live.items():
        assert torch.equal(read[key], value), key
