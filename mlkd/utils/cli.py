"""What tools/train.py and tools/test.py share: loading a config from the command line."""
from __future__ import annotations

import os.path as osp

from mmengine.config import Config


def load_run_config(config: str, cfg_options: dict | None, launcher: str,
                    work_dir: str | None) -> Config:
    """Read ``config``, apply ``--cfg-options``, set the launcher and the work dir.

    The work dir is ``work_dir``, else the config's own ``work_dir``, else
    ``work_dirs/<config name>``. A missing config file raises ``FileNotFoundError`` naming it.
    """
    if not osp.isfile(config):
        raise FileNotFoundError(f'config file not found: {config}')
    cfg = Config.fromfile(config)
    if cfg_options:
        cfg.merge_from_dict(cfg_options)
    cfg.launcher = launcher
    cfg.work_dir = work_dir or cfg.get('work_dir') or osp.join(
        'work_dirs', osp.splitext(osp.basename(config))[0])
    return cfg
