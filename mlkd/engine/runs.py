"""Run a config end to end inside the current process and hand back its metrics (demo, sweeps).

Tools that chain many short runs (``tools/demo.py``, ``tools/analysis_tools/sweep.py``) want for
each run: a progress line instead of the log, the final validation metrics, optionally the test
metrics, and the wall time. The run is an ordinary mmengine ``Runner`` on the given config, so the
same config gives the same result with ``tools/train.py``.
"""

from __future__ import annotations

import json
import logging
import os.path as osp
import time
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

from mmengine.config import Config

#: Metrics reported by the demo and the sweep (MultiLabelMetrics names).
METRICS = ('mAP', 'CF1_thr0.5', 'OF1_thr0.5')
#: Distillation fidelity (DistillFidelity), recorded under ``result['fidelity'][split]`` where the
#: config's evaluator computes it (a distilled stage), absent otherwise.
FIDELITY_METRICS = (
    'fidelity/mAP_vs_teacher',
    'fidelity/mean_abs_diff',
    'fidelity/label_agreement',
)


def fidelity_of(metrics, prefix: str = '') -> dict[str, float]:
    """The :data:`FIDELITY_METRICS` found in ``metrics`` (keys ``prefix + name``; message-hub
    scalars or plain floats), by name."""
    found = {}
    for key in FIDELITY_METRICS:
        value = metrics.get(prefix + key)
        if value is not None:
            found[key] = float(value.current() if hasattr(value, 'current') else value)
    return found


@contextmanager
def quiet() -> Iterator[None]:
    """Silence mmengine's INFO log lines and library deprecation warnings for the block."""
    logger = logging.getLogger('mmengine')
    level = logger.level
    logger.setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        warnings.simplefilter('ignore', FutureWarning)
        warnings.simplefilter('ignore', UserWarning)
        try:
            yield
        finally:
            logger.setLevel(level)


#: Where a run's seed goes unless its config names another key in ``seed_key``.
DEFAULT_SEED_KEY = 'randomness.seed'


def seed_key_of(cfg: Config) -> str:
    """The dotted key a config's run seed goes to (``seed_key``, default ``randomness.seed``).

    Raises:
        KeyError: ``seed_key`` is not a dotted string.
    """
    key = cfg.get('seed_key', DEFAULT_SEED_KEY)
    if not isinstance(key, str) or len(key.split('.')) < 2:
        raise KeyError(
            f'{cfg.filename}: seed_key={key!r} is not a dotted config key (such as '
            'train_dataloader.sampler.seed)'
        )
    return key


def seed_written_key(cfg: Config) -> str:
    """What :func:`set_run_seed` writes in ``cfg``: the whole ``randomness`` dict for the
    default seed key, else the ``seed_key`` alone (a sweep axis there would be overwritten)."""
    key = seed_key_of(cfg)
    return 'randomness' if key == DEFAULT_SEED_KEY else key


def set_run_seed(cfg: Config, seed: int) -> str:
    """Give ``cfg`` the run seed ``seed`` at the key its ``seed_key`` names (dotted; default
    ``randomness.seed``, which seeds everything: initialisation, data order, augmentation,
    dropout; the whole ``randomness`` dict is then replaced by ``dict(seed=seed,
    deterministic=False)``). A config may instead name ``train_dataloader.sampler.seed``: the
    tools' seeds then vary the data order and augmentation only, and ``randomness.seed`` keeps the
    initialisation the same in every run (the MultiDigits benchmark, docs/demo.md). Returns the
    key.

    Raises:
        KeyError: ``seed_key`` is not a dotted string or leads nowhere in the config.
        ValueError: ``seed_key`` is not ``randomness.seed`` and ``randomness.seed`` is unset (the
            initialisation would then differ from run to run).
    """
    key = seed_key_of(cfg)
    if key == DEFAULT_SEED_KEY:
        cfg.randomness = dict(seed=seed, deterministic=False)
        return key
    parts = key.split('.')
    node = cfg
    for part in parts[:-1]:
        node = node.get(part) if hasattr(node, 'get') else None
    if not hasattr(node, 'get'):
        raise KeyError(
            f'{cfg.filename}: seed_key={key!r} does not lead to a config dict '
            f'({".".join(parts[:-1])!r} is missing)'
        )
    if (cfg.get('randomness') or {}).get('seed') is None:
        raise ValueError(
            f'{cfg.filename}: seed_key={key!r} keeps the initialisation of every run '
            'at randomness.seed, which is unset; set randomness.seed'
        )
    cfg.merge_from_dict({key: seed})  # copies the dicts on the path: a cfg.copy() keeps its own
    return key


def train_and_evaluate(
    cfg: Config,
    label: str,
    *,
    test: bool = False,
    verbose: bool = False,
    progress: bool = True,
    overwrite: bool = False,
) -> dict:
    """Train ``cfg``; return its final validation (and test) metrics and wall time.

    Args:
        cfg: a full run config (``work_dir`` and ``randomness`` already set).
        label: text in front of the progress line.
        test: also run the test loop after training.
        verbose: keep mmengine's log output (otherwise only the progress line is shown).
        progress: draw the ``ProgressBarHook`` line.
        overwrite: train even where the work dir holds a run of another config
            (:func:`~mlkd.utils.work_dir.claim_work_dir`; a run of the same config is kept and
            this one goes to a timestamped sub-folder).

    Returns:
        ``{'val': {metric: value}, 'test': {...} (if ``test``), 'seconds': wall time,
        'cpu_seconds': CPU time of this process (all threads; on a shared machine the wall time
        grows with the load, the CPU time much less), 'checkpoint': path of the last checkpoint}``.
    """
    from mmengine.runner import Runner

    from mlkd.utils.config_values import check_config_values, check_train_loader
    from mlkd.utils.work_dir import claim_work_dir

    cfg = cfg.copy()
    check_config_values(cfg)
    claim_work_dir(cfg, overwrite=overwrite)
    cfg.experiment_name = f'{label.replace(" ", "_")}_{uuid.uuid4().hex[:6]}'
    if not verbose:
        cfg.log_level = 'ERROR'
    if progress:
        cfg.custom_hooks = list(cfg.get('custom_hooks', [])) + [
            dict(type='ProgressBarHook', label=label, interval=1)
        ]
    start, cpu_start = time.perf_counter(), time.process_time()
    with quiet() if not verbose else nullcontext():
        runner = Runner.from_cfg(cfg)
        check_train_loader(runner.train_loop.dataloader)
        runner.train()
        scalars = runner.message_hub.log_scalars
        missing = [key for key in METRICS if f'val/{key}' not in scalars]
        if missing:
            raise RuntimeError(
                f'{label}: final validation metrics {missing} were not logged '
                f'(is val_interval a divisor of max_epochs in {cfg.filename}?)'
            )
        result = {'val': {key: float(scalars[f'val/{key}'].current()) for key in METRICS}}
        fidelity = {'val': fidelity_of(scalars, 'val/')}
        if test:
            metrics = runner.test()
            result['test'] = {key: float(metrics[key]) for key in METRICS}
            fidelity['test'] = fidelity_of(metrics)
        if any(fidelity.values()):
            result['fidelity'] = fidelity
    result['seconds'] = time.perf_counter() - start
    result['cpu_seconds'] = time.process_time() - cpu_start
    result['checkpoint'] = osp.join(cfg.work_dir, f'epoch_{cfg.train_cfg.max_epochs}.pth')
    return result


def evaluate_checkpoint(cfg: Config, checkpoint: str, label: str, *, verbose: bool = False) -> dict:
    """Validation and test metrics of ``checkpoint`` under ``cfg`` (no training).

    Returns:
        ``{'val': {...}, 'test': {...}, 'seconds': None, 'checkpoint': checkpoint}``; ``seconds``
        is None because the training time of a given checkpoint is unknown.
    """
    from mmengine.runner import Runner

    cfg = cfg.copy()
    cfg.experiment_name = f'{label.replace(" ", "_")}_eval_{uuid.uuid4().hex[:6]}'
    cfg.load_from, cfg.resume = checkpoint, False
    if not verbose:
        cfg.log_level = 'ERROR'
    with quiet() if not verbose else nullcontext():
        runner = Runner.from_cfg(cfg)
        evaluated = {'val': runner.val(), 'test': runner.test()}
    result = {
        split: {key: float(metrics[key]) for key in METRICS} for split, metrics in evaluated.items()
    }
    fidelity = {split: fidelity_of(metrics) for split, metrics in evaluated.items()}
    if any(fidelity.values()):
        result['fidelity'] = fidelity
    return dict(result, seconds=None, checkpoint=checkpoint)


class StaleResultError(RuntimeError):
    """A stored result was made by another config than the one it would stand for."""


def load_finished_run(
    path: str, values: dict[str, str], *, what: str, overwrite: bool = False
) -> dict | None:
    """The result stored at ``path`` by :func:`save_finished_run` for the flattened config
    ``values`` (:func:`~mlkd.utils.config_fingerprint.flatten_config`), or ``None`` when there is
    none, or when it was made by another config and ``overwrite`` allows replacing it.

    Raises:
        StaleResultError: the stored result was made by another config (or by an mlkd that did
            not record it), naming ``what``, the file and the keys that differ.
    """
    from mlkd.utils.config_fingerprint import config_differences, fingerprint

    if not osp.isfile(path):
        return None
    with open(path, encoding='utf-8') as f:
        stored = json.load(f)
    if stored.get('config_sha256') == fingerprint(values):
        stored.pop('config_values', None)
        return stored
    if overwrite:
        return None
    why = (
        'records no config'
        if 'config_values' not in stored
        else 'was made by another config: ' + config_differences(stored['config_values'], values)
    )
    raise StaleResultError(
        f'{what}: the finished result {path!r} {why}; it is not reused. '
        'Pass --overwrite to run it again (replacing it), or choose another '
        '--work-dir'
    )


def save_finished_run(path: str, result: dict, values: dict[str, str]) -> None:
    """Store ``result`` at ``path`` with the fingerprint of the config that made it."""
    from mlkd.utils.config_fingerprint import fingerprint

    write_json_atomic(path, dict(result, config_sha256=fingerprint(values), config_values=values))


def write_json_atomic(path: str, data: dict) -> None:
    """Write ``data`` to ``path`` so that readers see either nothing or the whole file (the
    caller decides whether ``path`` may be replaced)."""
    from mlkd.utils.output_policy import write_text

    write_text(path, json.dumps(data, indent=1, sort_keys=True), overwrite=True)
