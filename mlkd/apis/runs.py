"""Run a config inside the current process: train it, evaluate a checkpoint, or both and hand back
the metrics.

:func:`train` (with :func:`prepare_training`, its checks before anything is built) and
:func:`evaluate` are what ``tools/train.py`` and ``tools/test.py`` run. What chains many short runs (a benchmark, :mod:`mlkd.apis.benchmark`; a sweep,
:mod:`mlkd.apis.sweep`; ``tools/pretrain.py``) wants for each run: a progress line instead of the
log, the final validation metrics, optionally the test metrics, and the wall time. The run is the
runner the config names (``runner_type``), built as ``tools/train.py`` builds it, so the same
config gives the same result with ``tools/train.py``.
"""

from __future__ import annotations

import json
import logging
import os
import os.path as osp
import time
import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any

from mmengine.config import Config
from mmengine.runner import Runner

#: Metrics reported by the demo and the sweep (MultiLabelMetrics names).
METRICS = ('mAP', 'CF1_thr0.5', 'OF1_thr0.5')
#: Distillation fidelity (DistillFidelity: multi-label, then single-label keys), recorded under
#: ``result['fidelity'][split]`` where the config's evaluator computes it (a distilled stage),
#: absent otherwise.
FIDELITY_METRICS = (
    'fidelity/mAP_vs_teacher',
    'fidelity/mean_abs_diff',
    'fidelity/label_agreement',
    'fidelity/top1_agreement',
    'fidelity/kl',
)


def fidelity_of(metrics: Mapping, prefix: str = '') -> dict[str, float]:
    """The :data:`FIDELITY_METRICS` found in ``metrics`` (keys ``prefix + name``; message-hub
    scalars or plain floats), by name."""
    found = {}
    for key in FIDELITY_METRICS:
        value = metrics.get(prefix + key)
        if value is not None:
            found[key] = float(value.current() if hasattr(value, 'current') else value)
    return found


#: Modules whose ``UserWarning`` notices :func:`quiet` hides: torch's DataLoader (more workers
#: than it suggests for this machine, said again by every run) and mmengine's own notices.
QUIET_USER_WARNING_MODULES = (r'torch\.utils\.data', r'mmengine')


@contextmanager
def quiet() -> Iterator[None]:
    """Silence mmengine's INFO log lines, deprecation warnings and the library notices of
    :data:`QUIET_USER_WARNING_MODULES` for the block; any other warning (mlkd's: what a run
    gets wrong) is still shown."""
    logger = logging.getLogger('mmengine')
    level = logger.level
    logger.setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        warnings.simplefilter('ignore', FutureWarning)
        for module in QUIET_USER_WARNING_MODULES:
            warnings.filterwarnings('ignore', category=UserWarning, module=module)
        try:
            yield
        finally:
            logger.setLevel(level)


#: Where a run's seed goes unless its config names another key in ``seed_key``.
DEFAULT_SEED_KEY = 'randomness.seed'


def seed_keys_of(cfg: Config) -> tuple[str, ...]:
    """The dotted keys a config's run seed goes to: its ``seed_key``, one key or a list of them
    (default ``randomness.seed``). A study whose data draw depends on the seed as well as its
    order (one observed positive per image drawn once per seed) names both:
    ``seed_key = ['train_dataloader.sampler.seed', 'train_dataloader.dataset.observed_labels.seed']``.

    Raises:
        KeyError: ``seed_key`` is neither a dotted string nor a non-empty list of them.
    """
    key = cfg.get('seed_key', DEFAULT_SEED_KEY)
    keys = tuple(key) if isinstance(key, (list, tuple)) else (key,)
    if not keys or any(not isinstance(k, str) or len(k.split('.')) < 2 for k in keys):
        raise KeyError(
            f'{cfg.filename}: seed_key={key!r} is not a dotted config key (such as '
            'train_dataloader.sampler.seed) nor a list of them'
        )
    if len(set(keys)) != len(keys):
        raise KeyError(f'{cfg.filename}: seed_key={key!r} names a key twice')
    return keys


def seed_key_of(cfg: Config) -> str:
    """The key a config's run seed is read back from: the first of :func:`seed_keys_of`."""
    return seed_keys_of(cfg)[0]


def seed_written_keys(cfg: Config) -> tuple[str, ...]:
    """What :func:`set_run_seed` writes in ``cfg``: the whole ``randomness`` dict for the
    default seed key, else each of the ``seed_key`` keys alone (a sweep axis there would be
    overwritten)."""
    return tuple('randomness' if k == DEFAULT_SEED_KEY else k for k in seed_keys_of(cfg))


def set_run_seed(cfg: Config, seed: int) -> str:
    """Give ``cfg`` the run seed ``seed`` at the keys its ``seed_key`` names (dotted; default
    ``randomness.seed``, which seeds everything: initialisation, data order, augmentation,
    dropout; the whole ``randomness`` dict is then replaced by ``dict(seed=seed,
    deterministic=False)``). A config may instead name ``train_dataloader.sampler.seed``: the
    tools' seeds then vary the data order and augmentation only, and ``randomness.seed`` keeps the
    initialisation the same in every run (the MultiDigits benchmark, docs/demo.md). With a list,
    every key gets the seed (:func:`seed_keys_of`). Returns the first key.

    Raises:
        KeyError: ``seed_key`` is not a dotted string (or a list of them) or leads nowhere in the
            config.
        ValueError: ``seed_key`` does not name ``randomness.seed`` and ``randomness.seed`` is unset
            (the initialisation would then differ from run to run).
    """
    keys = seed_keys_of(cfg)
    if DEFAULT_SEED_KEY in keys:
        cfg.randomness = dict(seed=seed, deterministic=False)
    others = [key for key in keys if key != DEFAULT_SEED_KEY]
    for key in others:
        parts = key.split('.')
        node = cfg
        for part in parts[:-1]:
            node = node.get(part) if hasattr(node, 'get') else None
        if not hasattr(node, 'get'):
            raise KeyError(
                f'{cfg.filename}: seed_key={key!r} does not lead to a config dict '
                f'({".".join(parts[:-1])!r} is missing)'
            )
    if others and (cfg.get('randomness') or {}).get('seed') is None:
        raise ValueError(
            f'{cfg.filename}: seed_key={others[0]!r} keeps the initialisation of every run '
            'at randomness.seed, which is unset; set randomness.seed'
        )
    # merge_from_dict copies the dicts on each path: a cfg.copy() keeps its own.
    cfg.merge_from_dict({key: seed for key in others})
    return keys[0]


def prepare_training(
    cfg: Config, *, resume: bool = False, overwrite: bool = False, distributed: bool = False
) -> str:
    """Before anything is built: refuse config values that cannot be right
    (:func:`~mlkd.utils.config_values.check_config_values`) and claim ``cfg.work_dir`` for this
    config (:func:`~mlkd.utils.work_dir.claim_work_dir`, which may move ``cfg.work_dir`` to a new
    timestamped sub-folder). Returns the work dir.

    Raises:
        ConfigValueError: naming the key and the value.
        WorkDirConflictError: the work dir holds a run of another config (without ``resume`` or
            ``overwrite``).
    """
    from mlkd.utils.config_values import check_config_values, warn_cut_schedule
    from mlkd.utils.work_dir import claim_work_dir

    check_config_values(cfg)
    warn_cut_schedule(cfg)
    return claim_work_dir(cfg, resume=resume, overwrite=overwrite, distributed=distributed)


def train(
    cfg: Config,
    *,
    resume: bool = False,
    overwrite: bool = False,
    distributed: bool = False,
    settings: Mapping[str, Any] | None = None,
    prepared: bool = False,
) -> Runner:
    """Train ``cfg`` with the runner it names (``runner_type``: ``MLKDRunner``; else mmengine's
    ``Runner``), as ``tools/train.py`` does; returns the runner after training.

    Args:
        cfg: a full run config (changed in place: the work dir, ``settings``).
        resume, overwrite, distributed: see :func:`prepare_training`.
        settings: top-level config entries set after the work dir is claimed, so not recorded as
            part of the run's config: what changes how a run is shown, not what it computes (the
            log level, a progress hook).
        prepared: ``cfg`` went through :func:`prepare_training` already (a tool that refuses a
            bad config or work dir before other checks of its own).

    Raises:
        ConfigValueError, WorkDirConflictError: see :func:`prepare_training` (nothing built).
        ConfigValueError: the training loader yields no batch
            (:func:`~mlkd.utils.config_values.check_train_loader`; nothing trained).
    """
    from mlkd.engine.runner import build_runner
    from mlkd.utils.config_values import check_train_loader

    if not prepared:
        prepare_training(cfg, resume=resume, overwrite=overwrite, distributed=distributed)
    for key, value in (settings or {}).items():
        cfg[key] = value
    os.makedirs(cfg.work_dir, exist_ok=True)
    runner = build_runner(cfg)
    check_train_loader(runner.train_loop.dataloader)  # builds the loop train() then uses
    runner.train()
    return runner


def score_against_teacher(cfg: Config, teacher_config: str, teacher_ckpt: str) -> None:
    """Make ``cfg``'s plain classifier the student of a loss-free distiller of the teacher, and
    add ``DistillFidelity`` to its val and test evaluators (:func:`add_fidelity`). In place.

    The classifier's weights are then loaded into ``model.student`` (:func:`evaluate`), not
    through ``load_from``, whose keys would lack the ``student.`` prefix.
    """
    model = cfg.model.to_dict() if hasattr(cfg.model, 'to_dict') else dict(cfg.model)
    if 'teacher' in model or 'student' in model:
        raise ValueError(
            f'--teacher scores a plain classifier, but {cfg.filename} defines model.type='
            f'{model.get("type")!r}; a distillation config evaluates its student against its own '
            'teacher (add DistillFidelity to its test_evaluator)'
        )
    if not osp.isfile(teacher_config):
        raise FileNotFoundError(f'--teacher: config file not found: {teacher_config}')
    preprocessor = model.pop('data_preprocessor', None) or cfg.get('data_preprocessor')
    cfg.model = dict(
        type='SingleTeacherDistiller',
        student=model,
        teacher=teacher_config,
        teacher_ckpt=teacher_ckpt,
        data_preprocessor=preprocessor,
    )
    add_fidelity(cfg)


#: mmpretrain's evaluators of single-label classification: a config evaluated by one of them gets
#: the single-label fidelity keys (softmax scores), any other the multi-label ones.
SINGLE_LABEL_EVALUATORS = ('Accuracy', 'SingleLabelMetric')


def add_fidelity(cfg: Config, splits: Sequence[str] = ('val', 'test')) -> None:
    """Add ``DistillFidelity`` to the evaluators of ``splits`` (those ``cfg`` has, unless they
    have one), in place: single-label where the split is evaluated by one of
    :data:`SINGLE_LABEL_EVALUATORS`, multi-label otherwise."""
    for key in (f'{split}_evaluator' for split in splits):
        if cfg.get(key) is None:
            continue
        evaluators = cfg[key]
        evaluators = list(evaluators) if isinstance(evaluators, (list, tuple)) else [evaluators]
        if not any(e.get('type') == 'DistillFidelity' for e in evaluators):
            single = any(e.get('type') in SINGLE_LABEL_EVALUATORS for e in evaluators)
            mode = 'single_label' if single else 'multi_label'
            evaluators.append(dict(type='DistillFidelity', mode=mode))
        cfg[key] = evaluators


def teachers_from_checkpoint(cfg: Config, checkpoint: str) -> None:
    """Evaluating a distiller checkpoint: the teachers it holds (``teacher.`` /
    ``teachers.<name>.`` weights, which the strict load then sets) are built without their own
    checkpoint files, which may be elsewhere or gone (the demo's teacher in its work dir, a
    teacher on another machine). In place; any other config is left as it is."""
    from mlkd.models.distillers.teacher_settings import (
        is_distiller_config,
        set_teacher,
        teacher_names,
    )
    from mlkd.models.weights import read_state_dict, resolve_checkpoint

    if not is_distiller_config(cfg.model):
        return
    keys = list(read_state_dict(resolve_checkpoint(checkpoint), 'checkpoint'))
    several = cfg.model.get('type') == 'MultiTeacherDistiller'
    for name in teacher_names(cfg.model):
        prefix = f'teachers.{name}.' if several else 'teacher.'
        if any(key.startswith(prefix) for key in keys):
            set_teacher(cfg.model, name, ckpt=None, allow_random=True)


def evaluate(
    cfg: Config,
    checkpoint: str,
    splits: Sequence[str] = ('test',),
    teacher: Sequence[str] | None = None,
) -> tuple[Runner, dict[str, dict]]:
    """Load ``checkpoint`` (strictly, under ``MLKDRunner``) into the runner ``cfg`` names and
    evaluate it on ``splits`` (``'val'``, ``'test'``), as ``tools/test.py`` does.

    Args:
        teacher: ``(config, checkpoint or work dir)`` of a teacher to score a plain classifier's
            fidelity to (:func:`score_against_teacher`; ``tools/test.py --teacher``).

    Returns:
        the runner and ``{split: the evaluator's metrics}``.
    """
    from mlkd.engine.runner import build_runner

    cfg.resume = False
    if teacher is None:
        teachers_from_checkpoint(cfg, checkpoint)
        cfg.load_from = checkpoint
        runner = build_runner(cfg)
    else:
        from mlkd.models.utils import unwrap_model
        from mlkd.models.weights import load_network_checkpoint

        score_against_teacher(cfg, *teacher)
        cfg.load_from = None  # the classifier's weights go into model.student, below
        runner = build_runner(cfg)
        load_network_checkpoint(unwrap_model(runner.model).student, checkpoint, 'student')
    loops = {'val': runner.val, 'test': runner.test}
    return runner, {split: loops[split]() for split in splits}


def last_checkpoint(runner: Runner) -> str | None:
    """The checkpoint ``runner`` saved last (``CheckpointHook``'s, by epoch or by iteration), as
    an absolute path (a result that names it stays right from any directory); ``None`` when it
    saved none."""
    path = runner.message_hub.get_info('last_ckpt')
    return None if path is None else osp.abspath(path)


def train_and_evaluate(
    cfg: Config,
    label: str,
    *,
    test: bool = False,
    verbose: bool = False,
    progress: bool = True,
    overwrite: bool = False,
    metrics: Sequence[str] = METRICS,
) -> dict:
    """Train ``cfg`` (:func:`train`); return its final validation (and test) metrics and wall time.

    Args:
        cfg: a full run config (``work_dir`` and ``randomness`` already set).
        label: text in front of the progress line.
        test: also run the test loop after training.
        verbose: keep mmengine's log output (otherwise only the progress line is shown).
        progress: draw the ``ProgressBarHook`` line.
        overwrite: train even where the work dir holds a run of another config
            (:func:`~mlkd.utils.work_dir.claim_work_dir`; a run of the same config is kept and
            this one goes to a timestamped sub-folder).
        metrics: the evaluation keys reported (each must be logged by the last validation).

    Returns:
        ``{'val': {metric: value}, 'test': {...} (if ``test``), 'seconds': wall time,
        'cpu_seconds': CPU time of this process (all threads; on a shared machine the wall time
        grows with the load, the CPU time much less), 'checkpoint': path of the last checkpoint
        (``None`` if none was saved)}``.

    Raises:
        MetricsNotLoggedError: one of ``metrics`` is not logged by the last validation (after
            training; the checkpoint stays, no result is made).
    """
    cfg = cfg.copy()
    prepare_training(cfg, overwrite=overwrite)
    settings: dict[str, Any] = dict(
        experiment_name=f'{label.replace(" ", "_")}_{uuid.uuid4().hex[:6]}'
    )
    if not verbose:
        settings['log_level'] = 'ERROR'
    if progress:
        settings['custom_hooks'] = list(cfg.get('custom_hooks', [])) + [
            dict(type='ProgressBarHook', label=label, interval=1)
        ]
    start, cpu_start = time.perf_counter(), time.process_time()
    with quiet() if not verbose else nullcontext():
        runner = train(cfg, settings=settings, prepared=True)
        scalars = runner.message_hub.log_scalars
        missing = [key for key in metrics if f'val/{key}' not in scalars]
        if missing:
            logged = sorted(key[len('val/') :] for key in scalars if key.startswith('val/'))
            raise MetricsNotLoggedError(
                f'{label}: the final validation logged no {missing} (it logged {logged}); '
                'check the metric names asked for (--metrics), and that val_interval divides '
                f'max_epochs in {cfg.filename}'
            )
        result = {'val': {key: float(scalars[f'val/{key}'].current()) for key in metrics}}
        fidelity = {'val': fidelity_of(scalars, 'val/')}
        if test:
            tested = runner.test()
            result['test'] = {key: float(tested[key]) for key in metrics}
            fidelity['test'] = fidelity_of(tested)
        if any(fidelity.values()):
            result['fidelity'] = fidelity
    result['seconds'] = time.perf_counter() - start
    result['cpu_seconds'] = time.process_time() - cpu_start
    result['checkpoint'] = last_checkpoint(runner)
    return result


def evaluate_checkpoint(
    cfg: Config,
    checkpoint: str,
    label: str,
    *,
    verbose: bool = False,
    metrics: Sequence[str] = METRICS,
    teacher: Sequence[str] | None = None,
) -> dict:
    """Validation and test ``metrics`` of ``checkpoint`` under ``cfg`` (no training,
    :func:`evaluate`; ``teacher``: ``(config, checkpoint)`` to score a plain classifier's
    fidelity to, which the result then holds under ``'fidelity'``).

    Returns:
        ``{'val': {...}, 'test': {...}, 'seconds': None, 'checkpoint': checkpoint}``; ``seconds``
        is None because the training time of a given checkpoint is unknown.
    """
    cfg = cfg.copy()
    cfg.experiment_name = f'{label.replace(" ", "_")}_eval_{uuid.uuid4().hex[:6]}'
    if not verbose:
        cfg.log_level = 'ERROR'
    with quiet() if not verbose else nullcontext():
        _, evaluated = evaluate(cfg, checkpoint, ('val', 'test'), teacher=teacher)
    result = {
        split: {key: float(values[key]) for key in metrics} for split, values in evaluated.items()
    }
    fidelity = {split: fidelity_of(values) for split, values in evaluated.items()}
    if any(fidelity.values()):
        result['fidelity'] = fidelity
    return dict(result, seconds=None, checkpoint=checkpoint)


class MetricsNotLoggedError(RuntimeError):
    """A run's final validation did not log a metric its caller reports (a misspelled name, or
    no validation at the last epoch)."""


class StaleResultError(RuntimeError):
    """A stored result was made by another config than the one it would stand for."""


def load_finished_run(
    path: str, cfg: Config | Mapping, *, what: str, overwrite: bool = False
) -> dict | None:
    """The result stored at ``path`` by :func:`save_finished_run` for ``cfg`` (a config, or a
    run's identity as a dict: same :func:`~mlkd.utils.fingerprint.fingerprint`), or ``None`` when
    there is none, or when it was made by another config and ``overwrite`` allows replacing it.

    Raises:
        StaleResultError: the stored result was made by another config (or by an mlkd that did
            not record it), naming ``what``, the file and the keys that differ.
    """
    from mlkd.utils.fingerprint import config_differences, fingerprint, flatten_config

    if not osp.isfile(path):
        return None
    with open(path, encoding='utf-8') as f:
        stored = json.load(f)
    if stored.get('config_sha256') == fingerprint(cfg):
        stored.pop('config_values', None)
        return stored
    if overwrite:
        return None
    why = (
        'records no config'
        if 'config_values' not in stored
        else 'was made by another config: '
        + config_differences(stored['config_values'], flatten_config(cfg))
    )
    raise StaleResultError(
        f'{what}: the finished result {path!r} {why}; it is not reused. '
        'Pass --overwrite to run it again (replacing it), or choose another '
        '--work-dir'
    )


def save_finished_run(path: str, result: dict, cfg: Config | Mapping) -> None:
    """Store ``result`` at ``path`` with the fingerprint of ``cfg``, the config that made it (and
    its flattened values, to name what differs when another config would reuse it)."""
    from mlkd.utils.atomic import write_json_atomic
    from mlkd.utils.fingerprint import fingerprint, flatten_config

    write_json_atomic(
        path, dict(result, config_sha256=fingerprint(cfg), config_values=flatten_config(cfg))
    )
