"""Version shims for mmengine 0.10.7 on today's torch and setuptools, and ``mlkd::`` config bases.

``import mlkd`` applies these and nothing else; what mlkd's runs add to mmengine (strict loading,
atomic saving, the keyed sample fetch, naming a failing sample, config text formatted once) is
:class:`mlkd.engine.MLKDRunner`'s, selected by ``runner_type`` in the config, so other libraries
in the same process keep mmengine's behaviour. Each shim is installed only where it is needed
(the condition is in :data:`_INSTALLS`) and has a test that fails without it
(``tests/utils/test_compat.py``). Drop one once the upstream release that fixes it is the minimum
mlkd supports. :data:`SHIMS` names them, in the order :func:`apply` considers them;
:func:`applied_shims` says which are in place in this process.

1. **weights-only checkpoint loading.** ``torch.load`` defaults to ``weights_only=True``
   since torch 2.6, and mmengine 0.10.7's local checkpoint loader passes nothing, so resuming,
   ``load_from`` and evaluating any mmengine checkpoint fail with ``UnpicklingError: Unsupported
   global: ...HistoryBuffer``. mlkd registers, through mmengine's own
   ``CheckpointLoader.register_scheme``, :func:`mlkd.utils.checkpoint.load_local_checkpoint` for
   local files, which keeps ``weights_only=True`` and allows, for the duration of each load,
   exactly the few globals that mmengine/mlkd checkpoints hold (files needing more are refused
   unless trusted explicitly; see that module). From torch 2.6 it makes mmengine's checkpoints
   loadable at all. It is the one shim installed on every supported torch, not only where the
   version needs it, and deliberately so: on torch 2.4 and 2.5, which mlkd also supports,
   mmengine's loader unpickles every checkpoint in full, which runs any code pickled into the
   file, and mlkd never opens a checkpoint that way (``weights_only=True`` everywhere, one of its
   rules). So on those versions it changes how every library in the process loads local
   checkpoints through mmengine: mmengine's and mlkd's own files load as before, a file that needs
   other globals is refused, naming them, unless trusted. Upstream fix: open-mmlab/mmengine PR
   #1670, not in 0.10.7. For the same reason, on every torch, mlkd registers
   :func:`mlkd.utils.checkpoint.load_url_checkpoint` for ``http://`` and ``https://`` paths
   (a ``teacher_ckpt``, ``load_from`` or ``init_cfg`` naming a URL): mmengine reads them with
   ``torch.hub.load_state_dict_from_url``, which unpickles in full whatever the torch version;
   mlkd downloads the file into the same hub cache and reads it as a local one. Not covered:
   mmengine's ``torchvision://``, ``open-mmlab://`` and similar prefixes, which its loaders turn
   into URLs and read in full themselves (mlkd's configs name URLs).
2. **package lookup without pkg_resources.** setuptools >= 82 has no ``pkg_resources``; mmengine's
   ``is_installed`` and ``get_installed_path`` import it, so ``_base_ = ['pkg::...']`` configs and
   ``mmengine.hub`` fail. Where ``pkg_resources`` cannot be imported, mlkd replaces both with the
   ``importlib``-based versions of :mod:`mlkd.utils.config_paths`.
3. **mlkd:: config bases.** mmengine resolves ``_base_ = ['pkg::path']`` only for the OpenMMLab
   packages in its ``MODULE2PACKAGE`` table, and only with a ``.mim/model-index.yml``. ``mlkd::``
   bases are resolved by :func:`mlkd.utils.config_paths.resolve_config_path` instead (the
   repository's ``configs/`` in a source checkout or editable install, else the
   ``mlkd/.mim/configs`` that ``pip install`` writes), so a user's config can inherit
   ``mlkd::_base_/datasets/multidigits.py``. No mmengine release resolves them, so this one is
   always installed; every other path goes to mmengine's resolution unchanged.

One more breakage (``init_dist('pytorch')`` calling ``torch.cuda.set_device`` on hosts without
CUDA) is handled without patching, in :mod:`mlkd.utils.dist`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

from mlkd.utils.checkpoint import load_local_checkpoint, load_url_checkpoint
from mlkd.utils.config_paths import get_installed_path, is_installed, resolve_config_path


def _mlkd_aware_cfg_path(original):
    """Wrap ``Config._get_cfg_path`` so that ``mlkd::`` base configs resolve (module doc)."""

    def get_cfg_path(cfg_path: str, filename: str):
        if cfg_path.startswith('mlkd::'):
            return resolve_config_path(cfg_path), 'mlkd'
        return original(cfg_path, filename)

    return get_cfg_path


def _load_checkpoints_weights_only() -> None:
    from mmengine.runner.checkpoint import CheckpointLoader

    CheckpointLoader.register_scheme(prefixes='', force=True)(load_local_checkpoint)
    prefixes = ('http://', 'https://')
    CheckpointLoader.register_scheme(prefixes=prefixes, force=True)(load_url_checkpoint)


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


def _always() -> bool:
    return True


def pkg_resources_missing() -> bool:
    """Whether ``pkg_resources`` cannot be imported (setuptools >= 82, or no setuptools)."""
    return importlib.util.find_spec('pkg_resources') is None


#: (name, when it is needed, how it is installed), in the order :func:`apply` considers them.
_INSTALLS: tuple[tuple[str, Callable[[], bool], Callable[[], None]], ...] = (
    ('weights-only checkpoint loading', _always, _load_checkpoints_weights_only),
    (
        'package lookup without pkg_resources',
        pkg_resources_missing,
        _look_packages_up_without_pkg_resources,
    ),
    ('mlkd:: config bases', _always, _resolve_mlkd_config_bases),
)
#: The names of the shims, in order.
SHIMS: tuple[str, ...] = tuple(name for name, _, _ in _INSTALLS)
_applied: list[str] = []


def applied_shims() -> tuple[str, ...]:
    """The names of the shims installed in this process (those of :data:`SHIMS` whose
    condition holds, once ``import mlkd`` has run)."""
    return tuple(_applied)


def apply() -> None:
    """Install every shim of :data:`SHIMS` that this environment needs (idempotent)."""
    for name, needed, install in _INSTALLS:
        if name not in _applied and needed():
            install()
            _applied.append(name)
