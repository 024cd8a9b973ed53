"""A training work dir belongs to one config: never train another config over its run.

mmengine writes checkpoints (``epoch_N.pth``, ``last_checkpoint``) at the root of the work dir and
logs into a ``<timestamp>/`` folder. Training a second, different config into the same work dir
replaced the first run's checkpoints and mixed both runs' logs, which ``--resume`` and the results
collector then took for one run. :func:`claim_work_dir` records the fingerprint of the resolved
config (:func:`mlkd.utils.fingerprint.fingerprint`) in ``<work_dir>/mlkd_run_config.json`` and,
when the work dir already holds a run:

* of a different (or unrecorded) config: refuses, unless ``resume`` or ``overwrite`` says what
  to do;
* of the same config, without ``resume``: trains in a new timestamped sub-folder, deleting
  nothing (with ``overwrite``: in the work dir itself, the earlier run first moved, whole, to
  ``<work_dir>/replaced_<timestamp>/``, so that the new run is alone there and nothing is
  deleted: :func:`set_aside`).
"""

from __future__ import annotations

import glob
import json
import os
import os.path as osp
import re
import time

from mmengine.config import Config

from mlkd.utils.fingerprint import config_differences, flatten_config, values_fingerprint
from mlkd.utils.output_policy import write_text

#: The record of the config that trained in a work dir.
RECORD_NAME = 'mlkd_run_config.json'


class WorkDirConflictError(RuntimeError):
    """The work dir holds a run of another config."""


def holds_a_run(work_dir: str) -> bool:
    """Whether ``work_dir`` holds a run that trained: a checkpoint, or logged training scalars
    (``<timestamp>/vis_data/scalars.json``, written from the first logged iteration). A start
    that failed before training (a bad teacher path, a bad value) leaves only a log and a config
    dump: not a run, so its work dir is not taken from the corrected call."""
    if not osp.isdir(work_dir):
        return False
    return bool(
        glob.glob(osp.join(work_dir, '*.pth'))
        or osp.exists(osp.join(work_dir, 'last_checkpoint'))
        or glob.glob(osp.join(work_dir, '*', 'vis_data', 'scalars.json'))
    )


def read_record(work_dir: str) -> dict | None:
    """The recorded config of ``work_dir`` (``{'sha256', 'config', 'values'}``) or ``None``."""
    path = osp.join(work_dir, RECORD_NAME)
    if not osp.isfile(path):
        return None
    with open(path, encoding='utf-8') as file:
        return json.load(file)


def check_work_dir(cfg: Config) -> None:
    """Refuse ``cfg`` where ``cfg.work_dir`` holds a run of another config (or of one not
    recorded), as :func:`claim_work_dir` without ``resume`` or ``overwrite`` would; nothing is
    written (for a caller that checks many runs before training any).

    Raises:
        WorkDirConflictError: naming the work dir and the keys that differ.
    """
    if holds_a_run(cfg.work_dir):
        values = flatten_config(cfg)
        _refuse_another_config(cfg.work_dir, values, values_fingerprint(values))


def _refuse_another_config(work_dir: str, values: dict, digest: str) -> None:
    record = read_record(work_dir)
    if record is None or record.get('sha256') != digest:
        what = (
            'a run whose config is not recorded'
            if record is None
            else f'a run of another config ({record.get("config")}; '
            f'{config_differences(record.get("values", {}), values)})'
        )
        raise WorkDirConflictError(
            f'work dir {work_dir!r} holds {what}; pass --resume to continue that run with '
            'this config, --overwrite to train here anyway (that run is moved to a replaced_* '
            'sub-folder), '
            'or choose another --work-dir'
        )


#: What a run leaves at the root of its work dir besides its ``<timestamp>/`` log folders and
#: mmengine's config dump: checkpoints, mmengine's pointer to the last one, and the record.
RUN_FILES = ('*.pth', 'last_checkpoint', RECORD_NAME)
#: A run's log folder (mmengine's timestamp, ``_N`` added when that folder exists already) or a
#: same-config rerun's sub-folder (``~N`` for a second one of the same second).
_RUN_FOLDER = re.compile(r'\d{8}_\d{6}([_~]\d+)?')


def new_folder(path: str) -> str:
    """``path``, or ``path~1``, ``path~2``... where it exists (the name of a folder to create)."""
    candidate, suffix = path, 1
    while osp.exists(candidate):
        candidate, suffix = f'{path}~{suffix}', suffix + 1
    return candidate


def set_aside(work_dir: str) -> str:
    """Move the run ``work_dir`` holds (:data:`RUN_FILES`, its ``<timestamp>/`` folders, its
    config dump where the record names the config, and ``tools/test.py``'s ``test/``) to a new
    ``<work_dir>/replaced_<timestamp>/``, for ``--overwrite``: the new run trains alone in the
    work dir (``--resume``, the results collector and the log tools read only it), and nothing is
    deleted. Returns the folder it went to."""
    aside = new_folder(osp.join(work_dir, time.strftime('replaced_%Y%m%d_%H%M%S')))
    # The dump of the recorded config; a record without the config's name takes no .py file.
    recorded = (read_record(work_dir) or {}).get('config')
    dumps = (glob.escape(osp.basename(recorded)),) if recorded else ()
    root = glob.escape(work_dir)
    names = sorted(
        {
            osp.basename(p)
            for pattern in (*RUN_FILES, *dumps)
            for p in glob.glob(osp.join(root, pattern))
        }
        | {n for n in os.listdir(work_dir) if _RUN_FOLDER.fullmatch(n)}
        | ({'test'} if osp.isdir(osp.join(work_dir, 'test')) else set())
    )
    os.makedirs(aside)
    for name in names:
        os.replace(osp.join(work_dir, name), osp.join(aside, name))
    from mmengine.logging import print_log

    print_log(f'--overwrite: the earlier run of {work_dir} moved to {aside}', logger='current')
    return aside


def claim_work_dir(
    cfg: Config, *, resume: bool = False, overwrite: bool = False, distributed: bool = False
) -> str:
    """Check that ``cfg`` may train in ``cfg.work_dir``; record its fingerprint there.

    Sets ``cfg.work_dir`` to a new ``<work_dir>/<timestamp>`` sub-folder when the work dir holds
    a run of the same config and neither ``resume`` nor ``overwrite`` is given (refused when
    ``distributed``, as the processes could pick different timestamps). Only rank 0 (``RANK``)
    writes the record. Returns the work dir used.

    Raises:
        WorkDirConflictError: the work dir holds checkpoints or logs of a different config (or of
            a config not recorded), naming the work dir, the keys that differ and the flags.
    """
    work_dir = cfg.work_dir
    values = flatten_config(cfg)
    digest = values_fingerprint(values)
    if holds_a_run(work_dir) and not (resume or overwrite):
        _refuse_another_config(work_dir, values, digest)
        if distributed:
            raise WorkDirConflictError(
                f'work dir {work_dir!r} holds a run of this config; pass --resume to continue '
                'it, --overwrite to train it again there, or choose another --work-dir'
            )
        # The same config again, as a new run: a sub-folder, as mmengine does for the logs.
        work_dir = new_folder(osp.join(work_dir, time.strftime('%Y%m%d_%H%M%S')))
        cfg.work_dir = work_dir
    if os.environ.get('RANK', '0') != '0':
        return work_dir
    if overwrite and not resume and holds_a_run(work_dir):  # --resume continues the run there
        set_aside(work_dir)
    record = dict(sha256=digest, config=getattr(cfg, 'filename', None), values=values)
    os.makedirs(work_dir, exist_ok=True)
    write_text(
        osp.join(work_dir, RECORD_NAME),
        json.dumps(record, indent=1, sort_keys=True),
        overwrite=True,
    )
    return work_dir
