"""Distributed set-up that also works on hosts without CUDA.

mmengine's ``init_dist('pytorch')`` (and the slurm variant) calls ``torch.cuda.set_device`` before
creating the process group, so a multi-process run fails on a CPU-only host even with the gloo
backend, and the Runner wraps the model in DDP with ``device_ids=[LOCAL_RANK]``, which CPU DDP
rejects. :func:`prepare_distributed` creates the gloo process group itself when CUDA is absent
(``Runner.setup_env`` then skips ``init_dist``) and sets a CPU-valid model wrapper.
"""

from __future__ import annotations

import gc
import os
import subprocess

import torch
import torch.distributed as torch_dist
from mmengine.config import Config


def _slurm_env() -> None:
    """Translate slurm variables into the torchrun ones gloo's env:// initialisation reads."""
    os.environ.setdefault('RANK', os.environ['SLURM_PROCID'])
    os.environ.setdefault('WORLD_SIZE', os.environ['SLURM_NTASKS'])
    os.environ.setdefault('LOCAL_RANK', os.environ.get('SLURM_LOCALID', '0'))
    if 'MASTER_ADDR' not in os.environ:
        nodes = os.environ['SLURM_NODELIST']
        first = subprocess.getoutput(f'scontrol show hostname {nodes} | head -n1').strip()
        os.environ['MASTER_ADDR'] = first
    os.environ.setdefault('MASTER_PORT', '29500')


def prepare_distributed(cfg: Config, launcher: str) -> None:
    """Make ``cfg`` runnable under ``launcher`` on this host (modifies ``cfg`` in place).

    With CUDA available nothing changes: mmengine initialises NCCL as usual. Without CUDA the gloo
    process group is created here from the launcher's environment variables, ``env_cfg.dist_cfg``
    is switched to gloo and ``model_wrapper_cfg`` gets ``device_ids=None``.
    """
    if launcher == 'none' or torch.cuda.is_available():
        return
    if launcher == 'slurm':
        _slurm_env()
    elif launcher != 'pytorch':
        raise ValueError(
            f'launcher {launcher!r} is not supported without CUDA; '
            "use 'pytorch' (torchrun) or 'slurm'"
        )
    missing = [
        k for k in ('RANK', 'WORLD_SIZE', 'MASTER_ADDR', 'MASTER_PORT') if k not in os.environ
    ]
    if missing:
        raise RuntimeError(
            f'--launcher {launcher} needs the environment variables {missing}; '
            'start the job with tools/dist_train.sh (torchrun) or srun'
        )
    cfg.setdefault('env_cfg', {}).setdefault('dist_cfg', {})['backend'] = 'gloo'
    if not torch_dist.is_initialized():
        timeout = cfg.env_cfg.dist_cfg.get('timeout')
        kwargs = {}
        if timeout is not None:
            from datetime import timedelta

            kwargs['timeout'] = timedelta(seconds=timeout)
        torch_dist.init_process_group(
            backend='gloo',
            rank=int(os.environ['RANK']),
            world_size=int(os.environ['WORLD_SIZE']),
            **kwargs,
        )
    wrapper = cfg.get('model_wrapper_cfg') or dict(
        type='MMDistributedDataParallel', broadcast_buffers=False
    )
    wrapper['device_ids'] = None
    cfg.model_wrapper_cfg = wrapper


def finish_distributed() -> None:
    """Free what still holds the process group, wait for every rank, then destroy the group.

    Without it a gloo run can abort at interpreter exit ("terminate called without an active
    exception") while one rank still tears down its communication threads. A finished runner
    lives on in reference cycles (hooks, loops and message hub point back at it) until the
    garbage collector runs; its DDP wrapper's reducer holds the process group, so without the
    collection here ``destroy_process_group`` only unregisters the group and gloo's threads end
    during interpreter finalisation, which aborted about one two-process fp16 run in seventeen.
    The caller drops its own references to the runner first (``tools/test.py``).
    """
    if torch_dist.is_available() and torch_dist.is_initialized():
        gc.collect()
        torch_dist.barrier()
        torch_dist.destroy_process_group()
