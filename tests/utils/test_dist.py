import os
import subprocess
import sys
import textwrap

from conftest import free_port

# Runs in its own interpreter so that the test process never holds a process group. The
# garbage collector is off, as it is between two of its automatic runs: a DDP wrapper kept in a
# reference cycle (as a finished runner keeps it) must be freed by finish_distributed itself
# before the group is destroyed, else the group outlives destroy_process_group.
_SCRIPT = textwrap.dedent(
    """
    import gc
    import os
    import sys

    import torch
    import torch.distributed as torch_dist
    from torch import nn

    from mlkd.utils import dist

    torch_dist.init_process_group('gloo', rank=0, world_size=1)
    gc.disable()
    holder = {'model': nn.parallel.DistributedDataParallel(nn.Linear(2, 1))}
    holder['self'] = holder  # a cycle, as a runner and its hooks form
    del holder

    def live_wrappers():
        return sum(isinstance(o, nn.parallel.DistributedDataParallel) for o in gc.get_objects())

    assert live_wrappers() == 1, 'the cycle should keep the wrapper alive'
    seen = []
    destroy = torch_dist.destroy_process_group
    torch_dist.destroy_process_group = lambda *a, **k: (seen.append(live_wrappers()), destroy())
    dist.finish_distributed()
    assert not torch_dist.is_initialized()
    print('live DDP wrappers when the group was destroyed:', seen)
    sys.exit(0 if seen == [0] else 1)
    """
)


def test_finish_distributed_frees_cyclic_ddp_wrappers_before_destroying_the_group():
    env = dict(MASTER_ADDR='127.0.0.1', MASTER_PORT=str(free_port()), OMP_NUM_THREADS='1')
    result = subprocess.run(
        [sys.executable, '-c', _SCRIPT],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'when the group was destroyed: [0]' in result.stdout
