"""What the tools' command lines share: finding and loading a config, the arguments of a run
(``--cfg-options``, ``--launcher``, ...), visualizer backends, trusted checkpoints, and how a tool
ends on a bad input."""

from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import os.path as osp
import sys
from collections.abc import Callable, Sequence

from mmengine.config import Config, DictAction

from mlkd.utils.config_paths import resolve_config_path


def load_config(config: str, cfg_options: dict | None = None) -> Config:
    """Read ``config`` (a path or ``mlkd::...``,
    :func:`~mlkd.utils.config_paths.resolve_config_path`) and apply
    ``--cfg-options``.

    A ``--cfg-options`` key written ``+key`` is added without the key checks.

    Raises:
        SyntaxError: naming the config file (the leaf or one of its ``_base_`` files), the line
            and the offending text; mmengine's own reads ``File "<unknown>"``.
        FileNotFoundError: a ``_base_`` file that does not exist, naming the config that lists
            it.
        UnknownConfigKeyError: for a misspelled top-level key in the file, or a
            ``--cfg-options`` key that nothing takes (:mod:`mlkd.utils.config_keys`).
        ValueError: for an option that the config overrides at run time.
    """
    from mlkd.utils.config_keys import (
        check_cfg_options,
        check_overridden_options,
        check_top_level_keys,
    )

    path = resolve_config_path(config)
    try:
        cfg = Config.fromfile(path)
    except SyntaxError as error:
        raise (_named_syntax_error(path, set()) or error) from None
    except FileNotFoundError as error:
        raise (_missing_base(path, set()) or error) from None
    check_top_level_keys(cfg, path)
    if cfg_options:
        check_cfg_options(cfg, cfg_options)
        check_overridden_options(cfg, cfg_options)
        cfg.merge_from_dict({key.removeprefix('+'): value for key, value in cfg_options.items()})
    return cfg


def _named_syntax_error(path: str, seen: set[str]) -> SyntaxError | None:
    """The first syntax error in the Python config ``path`` or, recursively, its ``_base_`` files,
    as a ``SyntaxError`` whose message names the file, the line and the text; ``None`` if they
    all parse (mmengine's error came from elsewhere)."""
    if path in seen or not path.endswith('.py') or not osp.isfile(path):
        return None
    seen.add(path)
    with open(path, encoding='utf-8') as file:
        source = file.read()
    try:
        compile(source, path, 'exec', flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        text = (error.text or '').rstrip()
        return SyntaxError(
            f'syntax error in config file {path}, line {error.lineno}: {error.msg}'
            + (f'\n    {text}' if text else ''),
            (path, error.lineno, error.offset, error.text),
        )
    for base in Config._get_base_files(path):
        base_path, _ = Config._get_cfg_path(base, path)
        found = _named_syntax_error(base_path, seen)
        if found is not None:
            return found
    return None


def _missing_base(path: str, seen: set[str]) -> FileNotFoundError | None:
    """The first ``_base_`` of ``path`` or, recursively, of its bases that does not exist, as a
    ``FileNotFoundError`` naming the config that lists it; ``None`` if all exist."""
    if path in seen or not path.endswith('.py') or not osp.isfile(path):
        return None
    seen.add(path)
    for base in Config._get_base_files(path):
        try:
            base_path, _ = Config._get_cfg_path(base, path)
        except FileNotFoundError as error:
            return FileNotFoundError(f'config {path}: its _base_ {base!r} is not found ({error})')
        base_path = osp.normpath(base_path)
        if not osp.isfile(base_path):
            return FileNotFoundError(
                f'config {path}: its _base_ {base!r} is not found ({base_path} does not exist)'
            )
        found = _missing_base(base_path, seen)
        if found is not None:
            return found
    return None


def load_run_config(
    config: str, cfg_options: dict | None, launcher: str, work_dir: str | None
) -> Config:
    """Read ``config``, apply ``--cfg-options``, set the launcher and the work dir.

    The work dir is ``work_dir``, else the config's own ``work_dir``, else
    ``work_dirs/<config name>``. ``config`` may be ``mlkd::<path under configs/>``
    (:func:`~mlkd.utils.config_paths.resolve_config_path`). A missing config file raises
    ``FileNotFoundError`` naming it.
    """
    cfg = load_config(config, cfg_options)
    cfg.launcher = launcher
    cfg.work_dir = (
        work_dir
        or cfg.get('work_dir')
        or osp.join('work_dirs', osp.splitext(osp.basename(cfg.filename))[0])
    )
    return cfg


#: ``--vis-backend`` name -> (mmengine backend, the packages of which one must be importable)
VIS_BACKENDS = {
    'local': ('LocalVisBackend', ()),
    'tensorboard': ('TensorboardVisBackend', ('tensorboard', 'tensorboardX')),
    'wandb': ('WandbVisBackend', ('wandb',)),
}


def set_vis_backends(cfg: Config, names: list[str]) -> None:
    """Log to the visualizer backends ``names`` (see :data:`VIS_BACKENDS`) besides the local one.

    The local backend (``<work_dir>/<timestamp>/vis_data/scalars.json``, read by
    ``tools/analysis_tools``) is always kept.

    Raises:
        ValueError: for an unknown name.
        ModuleNotFoundError: naming the package to install when a backend's package is missing.
    """
    backends = [dict(type='LocalVisBackend')]
    for name in dict.fromkeys(names):
        if name not in VIS_BACKENDS:
            raise ValueError(
                f'unknown --vis-backend {name!r}; choose from {", ".join(VIS_BACKENDS)}'
            )
        backend, packages = VIS_BACKENDS[name]
        if packages and not any(importlib.util.find_spec(p) for p in packages):
            raise ModuleNotFoundError(
                f'--vis-backend {name} needs the {packages[0]!r} package, which is not installed: '
                f'pip install {packages[0]} (or pip install -r requirements/optional.txt)'
            )
        if name == 'wandb':
            backends.append(
                dict(
                    type=backend, init_kwargs=dict(project='mlkd', name=cfg.get('experiment_name'))
                )
            )
        elif name != 'local':
            backends.append(dict(type=backend))
    cfg.vis_backends = backends
    cfg.setdefault('visualizer', dict(type='Visualizer'))
    cfg.visualizer.vis_backends = backends


class _TrustCheckpoint(argparse.Action):
    """``--trust-checkpoint PATH``: trusted as soon as it is parsed; a missing file is an error."""

    def __call__(self, parser, namespace, value, option_string=None) -> None:
        from mlkd.utils.checkpoint import trust_checkpoint

        try:
            trust_checkpoint(value)
        except FileNotFoundError as error:
            parser.error(str(error))
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest) or []), value])


def add_trust_checkpoint_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--trust-checkpoint PATH`` (repeatable); see :mod:`mlkd.utils.checkpoint`."""
    parser.add_argument(
        '--trust-checkpoint',
        action=_TrustCheckpoint,
        default=None,
        metavar='CKPT',
        help='unpickle CKPT in full if a weights-only load refuses it (it can then run code: '
        'only for files you trust); repeat for several files. Also: MLKD_TRUST_CHECKPOINTS',
    )


def probability(text: str) -> float:
    """argparse type of a score threshold: a number in [0, 1] (a sigmoid's or softmax's range)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r} is not a number') from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f'{text} is not in [0, 1] (scores are probabilities)')
    return value


class CfgOptionsAction(DictAction):
    """mmengine's ``DictAction``, refusing an item without ``=`` by name (mmengine's own error
    was "not enough values to unpack")."""

    def __call__(self, parser, namespace, values, option_string=None):
        bad = [item for item in values if '=' not in item]
        if bad:
            parser.error(
                f'{option_string}: {bad[0]!r} is not KEY=VALUE (e.g. train_cfg.max_epochs=3)'
            )
        super().__call__(parser, namespace, values, option_string)


def add_cfg_options_argument(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """Add ``--cfg-options KEY=VALUE ...``: config overrides for :func:`load_config`, parsed by
    mmengine's ``DictAction`` into a dict (``{}`` when the option is not given)."""
    parser.add_argument('--cfg-options', nargs='+', action=CfgOptionsAction, default={}, help=help)


def add_checkpoint_table_arguments(parser: argparse.ArgumentParser) -> None:
    """Add what the tools that tabulate a run's checkpoints share: ``config``, ``checkpoints``
    (one or more), ``--out`` (a Markdown copy of the table) and ``--overwrite``."""
    from mlkd.utils.output_policy import add_overwrite_argument

    parser.add_argument('config')
    parser.add_argument('checkpoints', nargs='+')
    parser.add_argument('--out', help='also write the table to this Markdown file')
    add_overwrite_argument(parser)


def add_jobs_arguments(
    parser: argparse.ArgumentParser, default: int = 1, what: str = 'runs'
) -> None:
    """Add what the tools that train many runs share: ``--jobs`` (``what`` trained side by side,
    each in a worker process on one thread, hence the same numbers whatever the count) and
    ``--verbose`` (the training logs)."""
    parser.add_argument(
        '--jobs',
        type=int,
        default=default,
        help=f'{what} trained side by side, one process and one thread each (default: {default}); '
        f'each gives the same result whatever the number',
    )
    parser.add_argument('--verbose', action='store_true', help='show the training logs')


def study_call_arguments(args: argparse.Namespace) -> dict:
    """The keyword arguments of :func:`~mlkd.apis.study.run_study` that a study tool's command
    line gives (``--seeds``, ``--epochs``, ``--cfg-options``, ``--jobs``, ``--overwrite``,
    ``--verbose``)."""
    return dict(
        seeds=args.seeds,
        epochs=args.epochs,
        options=args.cfg_options,
        jobs=args.jobs,
        overwrite=args.overwrite,
        verbose=args.verbose,
    )


#: How ``--launcher`` may start the processes of a run (mmengine's launchers).
LAUNCHERS = ('none', 'pytorch', 'slurm')


def add_run_arguments(parser: argparse.ArgumentParser, *, cfg_options_example: str) -> None:
    """Add what ``tools/train.py`` and ``tools/test.py`` share: ``--cfg-options`` (its help shows
    ``cfg_options_example``), ``--trust-checkpoint``, ``--launcher`` and ``--local_rank`` (which
    :func:`parse_run_arguments` hands on in ``LOCAL_RANK``)."""
    add_cfg_options_argument(parser, help=f'override config entries, e.g. {cfg_options_example}')
    add_trust_checkpoint_argument(parser)
    parser.add_argument('--launcher', choices=list(LAUNCHERS), default='none')
    parser.add_argument('--local_rank', '--local-rank', type=int, default=0)


def parse_run_arguments(
    parser: argparse.ArgumentParser, argv: list[str] | None = None
) -> argparse.Namespace:
    """``parser.parse_args(argv)`` for a parser with :func:`add_run_arguments`; a launcher's
    ``--local_rank`` is set as ``LOCAL_RANK`` unless the environment has it already."""
    args = parser.parse_args(argv)
    os.environ.setdefault('LOCAL_RANK', str(args.local_rank))
    return args


def add_device_argument(
    parser: argparse.ArgumentParser,
    help: str | None = 'default: cuda when torch sees a GPU',
    choices: Sequence[str] | None = ('cpu', 'cuda'),
) -> None:
    """Add ``--device {cpu,cuda}``, by default ``cuda`` when torch sees a GPU;
    ``choices=None`` takes any torch device string (``cuda:1``)."""
    import torch

    parser.add_argument(
        '--device',
        default='cuda' if torch.cuda.is_available() else 'cpu',
        choices=None if choices is None else list(choices),
        help=help,
    )


def parse_checked_arguments(
    parser: argparse.ArgumentParser, argv: list[str] | None = None
) -> argparse.Namespace:
    """``parser.parse_args(argv)``, then refuse before the long work what would fail after it:
    an ``--out`` file that exists without ``--overwrite`` (for a parser with ``--out`` and
    :func:`~mlkd.utils.output_policy.add_overwrite_argument`), ``--device cuda`` where torch sees
    no CUDA device (for a parser with :func:`add_device_argument`)."""
    from mlkd.utils.output_policy import check_output

    args = parser.parse_args(argv)
    if getattr(args, 'out', None):
        check_output(args.out, overwrite=args.overwrite)
    if getattr(args, 'device', None) == 'cuda':
        import torch

        if not torch.cuda.is_available():
            parser.error('--device cuda: torch sees no CUDA device here')
    return args


def run_tool(
    main: Callable[[], object],
    user_errors: tuple[type[BaseException], ...] = (OSError, ValueError),
) -> None:
    """Run a tool's ``main``; a user error ends it with ``<tool>: <message>`` and exit status 1.

    A missing or unreadable file, or a bad value, is the user's to fix: the message names it,
    a traceback would only hide it. Any other exception is a defect and keeps its traceback.
    """
    tool = osp.splitext(osp.basename(main.__code__.co_filename))[0]
    try:
        main()
    except user_errors as error:
        sys.exit(f'{tool}: {error}')
