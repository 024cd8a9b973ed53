"""Compatibility patches for today's stack (torch >= 2.6, setuptools >= 82) and mmengine's gaps.

Everything that patches a third-party package lives here, is applied once by ``import mlkd`` and has
a test (``tests/utils/test_compat.py``, ``tests/tools/test_bad_inputs.py``) that fails without it. Drop a patch
once the upstream release that fixes it is the minimum mlkd supports. :data:`PATCHES` names the
nine, in the order :func:`apply` installs them; :func:`applied_patches` says which are in place.

1. **weights-only loading of local checkpoints.** ``torch.load`` defaults to ``weights_only=True``
   since torch 2.6, and mmengine 0.10.7's local checkpoint loader passes nothing, so resuming,
   ``load_from`` and evaluating any mmengine checkpoint fail with ``UnpicklingError: Unsupported
   global: ...HistoryBuffer``. mlkd re-registers the local-file scheme with
   :func:`mlkd.utils.checkpoint.load_local_checkpoint`, which keeps ``weights_only=True`` and
   allows, for the duration of each load, exactly the few globals that mmengine/mlkd checkpoints
   hold (files needing more are refused unless trusted explicitly; see that module). Upstream fix:
   open-mmlab/mmengine PR #1670, not in 0.10.7.
2. **atomic checkpoint saving.** mmengine's ``save_checkpoint`` serialises into memory, then opens
   the destination (truncating it) and writes, so a crash or a full disk during that write leaves
   a truncated ``epoch_N.pth`` (or destroys the file it replaces). The Runner's and
   ``CheckpointHook``'s references are replaced by :func:`mlkd.utils.checkpoint.save_checkpoint`,
   which writes a temporary file and renames it.
3. **strict loading of checkpoints into the model.** mmengine's ``Runner.load_checkpoint``
   (``load_from``, resume, ``tools/test.py``) is not strict: a checkpoint that does not fit the
   model only logs a warning, and the run goes on with partly random weights. It is replaced by
   :func:`mlkd.utils.checkpoint.strict_runner_load_checkpoint` (opt out: ``load_strict = False``).
4. **package lookup without pkg_resources.** setuptools >= 82 has no ``pkg_resources``; mmengine's
   ``is_installed`` and ``get_installed_path`` import it, so ``_base_ = ['pkg::...']`` configs and
   ``mmengine.hub`` fail. mlkd replaces both with the ``importlib``-based versions of
   :mod:`mlkd.utils.config_paths`.
5. **mlkd:: config bases.** mmengine resolves ``_base_ = ['pkg::path']`` only for the OpenMMLab
   packages in its ``MODULE2PACKAGE`` table, and only with a ``.mim/model-index.yml``. ``mlkd::``
   bases are resolved by :func:`mlkd.utils.config_paths.resolve_config_path` instead (the
   repository's ``configs/`` in a source checkout or editable install, else the
   ``mlkd/.mim/configs`` that ``pip install`` writes), so a user's config can inherit
   ``mlkd::_base_/datasets/multidigits.py``.
6. **config syntax errors name the file.** mmengine parses every config file (and each
   ``_base_``) with ``ast.parse(source)`` before anything else, without the file name, so a syntax
   error reads ``File "<unknown>", line 2``. ``Config._is_lazy_import`` is wrapped to parse with
   the file name first: the ``SyntaxError`` names the file, the line and the offending text
   (``tests/tools/test_bad_inputs.py::test_config_syntax_error_names_file_and_line``).
7. **sample loading errors name the sample.** An error while loading one sample (a truncated JPEG
   read by Pillow: ``OSError: image file is truncated``) names neither the image nor the sample.
   mmengine's ``BaseDataset.prepare_data`` is wrapped to add a note (kept by DataLoader workers'
   re-raise) naming the dataset, the sample index and its ``img_path``; the exception's type and
   message are unchanged
   (``tests/tools/test_bad_inputs.py::test_a_truncated_image_names_its_path_and_sample``).
8. **keyed dataset fetch.** mmengine's datasets and samplers know nothing of the epoch, and its
   ``worker_init_fn`` seeds each worker once, so augmentations repeat every epoch (non-persistent
   workers), or depend on the worker count and differ after resuming (persistent workers). The
   ``__getitem__`` of mmengine's ``BaseDataset`` (which mmpretrain's and mlkd's datasets inherit)
   and of its dataset wrappers is wrapped by :func:`mlkd.utils.sample_seed.keyed_getitem`, so
   that an index from :class:`mlkd.datasets.EpochKeyedSampler` is fetched with the random state
   keyed by (seed, epoch, index). Plain ``int`` indices are fetched unchanged.

9. **config text formatted once.** mmengine formats a config's text with yapf every time it
   needs it: logging the environment, the runtime-info hook, dumping the config into the work
   dir and **every checkpoint** (its ``meta.cfg``), 0.1-0.9 s of CPU each (the intra-class
   configs are the slowest), so a 12-epoch demo stage spends seconds re-formatting one
   unchanged text. ``FormatCode`` as mmengine's config module calls it is a pure function of
   the unformatted text and the style, so its results are memoised on exactly those
   (:func:`_memoised_format_code`, a bounded cache): the text written is unchanged, byte for byte
   (``tests/utils/test_compat.py``).

One more breakage (``init_dist('pytorch')`` calling ``torch.cuda.set_device`` on hosts without
CUDA) is handled without patching, in :mod:`mlkd.utils.dist`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from mlkd.utils.checkpoint import (
    load_local_checkpoint,
    save_checkpoint,
    strict_runner_load_checkpoint,
)
from mlkd.utils.config_paths import get_installed_path, is_installed, resolve_config_path


def _mlkd_aware_cfg_path(original):
    """Wrap ``Config._get_cfg_path`` so that ``mlkd::`` base configs resolve (module doc)."""

    def get_cfg_path(cfg_path: str, filename: str):
        if cfg_path.startswith('mlkd::'):
            return resolve_config_path(cfg_path), 'mlkd'
        return original(cfg_path, filename)

    return get_cfg_path


def _syntax_checked(original):
    """Wrap ``Config._is_lazy_import`` so that a syntax error names its config file."""

    def is_lazy_import(filename: str) -> bool:
        if filename.endswith('.py'):
            with open(filename, encoding='utf-8') as file:
                source = file.read()
            try:
                compile(source, filename, 'exec', flags=ast.PyCF_ONLY_AST, dont_inherit=True)
            except SyntaxError as error:
                text = (error.text or '').rstrip()
                raise SyntaxError(
                    f'syntax error in config file {filename}, line {error.lineno}: '
                    f'{error.msg}' + (f'\n    {text}' if text else ''),
                    (filename, error.lineno, error.offset, error.text),
                ) from None
        return original(filename)

    return is_lazy_import


def _sample_named_on_error(original):
    """Wrap ``BaseDataset.prepare_data`` so that a failing sample is named (module doc)."""

    def prepare_data(self, idx):
        try:
            return original(self, idx)
        except Exception as error:
            try:
                path = self.get_data_info(idx).get('img_path')
            except Exception:  # noqa: BLE001 - the note must not hide the original error
                path = None
            error.add_note(
                f'while loading sample {idx} of {type(self).__name__}'
                + (f': {path}' if path else '')
            )
            raise

    return prepare_data


def _memoised_format_code(original: Callable, size: int = 64) -> Callable:
    """``original`` (yapf's ``FormatCode``) with its results cached on the text and the style.

    Only calls that pass the text and a ``style_config`` dict (mmengine's form) are cached; any
    other call goes through unchanged. The cache keeps the ``size`` most recent texts.
    """
    import functools

    @functools.lru_cache(maxsize=size)
    def cached(text: str, style: tuple, verify: bool | None) -> tuple:
        options = {} if verify is None else {'verify': verify}
        return original(text, style_config=dict(style), **options)

    @functools.wraps(original)
    def format_code(text, *args, **kwargs):
        style = kwargs.get('style_config')
        if (
            args
            or set(kwargs) - {'style_config', 'verify'}
            or not isinstance(style, dict)
            or not isinstance(text, str)
        ):
            return original(text, *args, **kwargs)
        try:
            key = tuple(sorted(style.items()))
            hash(key)
        except TypeError:  # an unhashable style value: nothing to key the cache on
            return original(text, *args, **kwargs)
        return cached(text, key, kwargs.get('verify'))

    format_code.cache_info = cached.cache_info
    return format_code


def _format_config_text_once() -> None:
    import mmengine.config.config as config_module

    config_module.FormatCode = _memoised_format_code(config_module.FormatCode)


def _load_local_checkpoints_weights_only() -> None:
    from mmengine.runner.checkpoint import CheckpointLoader

    CheckpointLoader.register_scheme(prefixes='', force=True)(load_local_checkpoint)


def _save_checkpoints_atomically() -> None:
    import mmengine.runner as runner_package
    import mmengine.runner.checkpoint as checkpoint_module
    import mmengine.runner.runner as runner_module

    # Runner.save_checkpoint uses runner_module's name; CheckpointHook (publishing) the package's.
    for module in (checkpoint_module, runner_package, runner_module):
        module.save_checkpoint = save_checkpoint


def _load_checkpoints_into_the_model_strictly() -> None:
    import mmengine.runner.runner as runner_module

    runner_module.Runner.load_checkpoint = strict_runner_load_checkpoint


def _look_packages_up_without_pkg_resources() -> None:
    import mmengine.config.config as config_module
    import mmengine.hub.hub as hub_module
    import mmengine.utils as utils_module
    import mmengine.utils.package_utils as package_utils

    for module in (package_utils, utils_module, config_module, hub_module):
        if hasattr(module, 'is_installed'):
            module.is_installed = is_installed
        if hasattr(module, 'get_installed_path'):
            module.get_installed_path = get_installed_path


def _resolve_mlkd_config_bases() -> None:
    from mmengine.config import Config

    Config._get_cfg_path = staticmethod(_mlkd_aware_cfg_path(Config._get_cfg_path))


def _name_the_config_file_of_a_syntax_error() -> None:
    from mmengine.config import Config

    Config._is_lazy_import = staticmethod(_syntax_checked(Config._is_lazy_import))


def _name_the_sample_that_fails_to_load() -> None:
    from mmengine.dataset import BaseDataset

    BaseDataset.prepare_data = _sample_named_on_error(BaseDataset.prepare_data)


def _fetch_samples_under_their_key() -> None:
    from mmengine.dataset import BaseDataset, ClassBalancedDataset, ConcatDataset, RepeatDataset

    from mlkd.utils.sample_seed import keyed_getitem

    for dataset_class in (BaseDataset, ConcatDataset, RepeatDataset, ClassBalancedDataset):
        dataset_class.__getitem__ = keyed_getitem(dataset_class.__getitem__)


#: Every patch, by the name the README lists it under, in the order :func:`apply` installs them.
_PATCHES: tuple[tuple[str, Callable[[], None]], ...] = (
    ('weights-only loading of local checkpoints', _load_local_checkpoints_weights_only),
    ('atomic checkpoint saving', _save_checkpoints_atomically),
    ('strict loading of checkpoints into the model', _load_checkpoints_into_the_model_strictly),
    ('package lookup without pkg_resources', _look_packages_up_without_pkg_resources),
    ('mlkd:: config bases', _resolve_mlkd_config_bases),
    ('config syntax errors name the file', _name_the_config_file_of_a_syntax_error),
    ('sample loading errors name the sample', _name_the_sample_that_fails_to_load),
    ('keyed dataset fetch', _fetch_samples_under_their_key),
    ('config text formatted once', _format_config_text_once),
)
#: The names of the patches, in order.
PATCHES: tuple[str, ...] = tuple(name for name, _ in _PATCHES)
_applied: list[str] = []


def applied_patches() -> tuple[str, ...]:
    """The names of the patches installed in this process (all of :data:`PATCHES` once
    ``import mlkd`` has run)."""
    return tuple(_applied)


def apply() -> None:
    """Install every patch of :data:`PATCHES` (idempotent: each is installed once)."""
    for name, install in _PATCHES:
        if name not in _applied:
            install()
            _applied.append(name)
