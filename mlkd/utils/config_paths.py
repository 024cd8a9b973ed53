"""Where configs and installed packages are: the one home of ``package::path`` config resolution.

Used by the tools' command-line helpers (:mod:`mlkd.utils.cli`), by the mmengine patch that lets
``_base_ = ['mlkd::...']`` resolve (:mod:`mlkd.utils.compat`) and by the ``mlkd`` command
(:mod:`mlkd.cli`). Standard library only, and it imports nothing from mlkd, so every one of them
can import it first.

``get_installed_path`` / ``is_installed`` are ``pkg_resources``-free versions of mmengine's
functions of the same names (setuptools >= 82 has no ``pkg_resources``); :mod:`mlkd.utils.compat`
installs them in mmengine.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os.path as osp

__all__ = ['get_installed_path', 'is_installed', 'resolve_config_path', 'source_checkout_root']


def source_checkout_root() -> str | None:
    """The repository root when mlkd is imported from a source checkout (``pip install -e .`` or
    ``PYTHONPATH``), else ``None``."""
    root = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
    if osp.isfile(osp.join(root, 'setup.py')) and osp.isdir(osp.join(root, 'configs')):
        return root
    return None


def _distribution_of(package: str) -> importlib.metadata.Distribution | None:
    try:
        return importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def is_installed(package: str) -> bool:
    """Whether ``package`` (a distribution or a module name) is installed."""
    if _distribution_of(package) is not None:
        return True
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin is not None


def get_installed_path(package: str) -> str:
    """The folder that ``import package`` loads.

    Distribution names such as ``mmcv-lite`` are mapped to their top-level module.

    Raises:
        ModuleNotFoundError: when the package is not installed.
        RuntimeError: for a namespace package (it has no single folder).
    """
    module = package
    dist = _distribution_of(package)
    if dist is not None:
        top_level = dist.read_text('top_level.txt')
        if top_level and top_level.split():
            module = top_level.split()[0]
    spec = importlib.util.find_spec(module.replace('-', '_'))
    if spec is None:
        raise ModuleNotFoundError(f'package {package!r} is not installed')
    if spec.origin is None:
        raise RuntimeError(
            f'{package} is a namespace package, which is invalid for `get_installed_path`'
        )
    return osp.dirname(spec.origin)


def resolve_config_path(config: str) -> str:
    """The file of a config given as a path or as ``package::relative/path.py``.

    ``mlkd::3d/3d_multidigits.py`` is looked up in the repository's ``configs/`` when mlkd runs
    from a source checkout (what the user edits), else in ``<package>/.mim/configs`` where
    ``pip install`` puts mlkd's configs (mim's layout, which mmengine also uses to resolve
    ``_base_ = ['mlkd::...']``). Other packages are looked up in their ``.mim/configs``.

    Raises:
        FileNotFoundError: naming the config and the places searched.
    """
    if '::' not in config:
        if not osp.isfile(config):
            raise FileNotFoundError(f'config file not found: {config}')
        return config
    package, _, relative = config.partition('::')
    candidates = []
    if package == 'mlkd' and source_checkout_root():
        candidates.append(osp.join(source_checkout_root(), 'configs', relative))
    try:
        candidates.append(osp.join(get_installed_path(package), '.mim', 'configs', relative))
    except ModuleNotFoundError:
        raise FileNotFoundError(
            f'config {config!r}: package {package!r} is not installed'
        ) from None
    for candidate in candidates:
        if osp.isfile(candidate):
            return candidate
    raise FileNotFoundError(f'config {config!r} not found (looked for {" and ".join(candidates)})')
