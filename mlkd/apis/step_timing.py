"""What the speed benchmarks of ``tools/benchmarks`` share: training steps timed side by side,
and the networks and methods they time (from ``configs/_base_``, without pretrained weights).

Speed goals are measured by these scripts and written up (docs/benchmarks/), never asserted by
tests; the tests check what is timed and how the medians are taken.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from mmengine.config import Config

from mlkd.utils.config_paths import resolve_config_path

__all__ = ['CRD_SAMPLES', 'method_cfg', 'net_cfg', 'timed_interleaved']

#: CRD's bank size for a timing run (the banks are indexed, never scanned: N does not matter).
CRD_SAMPLES = 1000


def net_cfg(name: str) -> dict:
    """``configs/_base_/models/<name>_ml.py``'s model, without its pretrained weights (no
    download for a timing run)."""
    cfg = Config.fromfile(resolve_config_path(f'mlkd::_base_/models/{name}_ml.py')).model
    cfg.backbone.pop('init_cfg', None)
    return cfg.to_dict()


def method_cfg(name: str) -> dict:
    """``configs/_base_/methods/<name>.py``'s ``method`` dict, CRD with a small bank."""
    path = resolve_config_path(f'mlkd::_base_/methods/{name}.py')
    method = Config.fromfile(path).method.to_dict()
    if 'crd' in method.get('distill_losses', {}):
        method['distill_losses']['crd']['num_samples'] = CRD_SAMPLES
    return method


def timed_interleaved(
    steps: dict[str, Callable[[], object]],
    repeats: int,
    device: str,
    warmup: int = 2,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, float]:
    """Median seconds (of ``clock``) of each step, the steps run in turn (round-robin)
    ``warmup + repeats`` times; the first ``warmup`` rounds are not timed. Round-robin, so that a
    change of machine load touches every step alike; on CUDA each step is synchronised."""
    import torch

    def sync():
        if device == 'cuda':
            torch.cuda.synchronize()

    times: dict[str, list[float]] = {name: [] for name in steps}
    for round_idx in range(warmup + repeats):
        for name, step in steps.items():
            sync()
            start = clock()
            step()
            sync()
            if round_idx >= warmup:
                times[name].append(clock() - start)
    return {name: statistics.median(values) for name, values in times.items()}
