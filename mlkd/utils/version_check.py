"""Readable errors for version conflicts among torch and the OpenMMLab packages."""

from __future__ import annotations

import importlib.metadata

# (distribution names, minimum inclusive, maximum exclusive). mmcv may come as mmcv or mmcv-lite.
REQUIREMENTS: dict[str, tuple[tuple[str, ...], str, str]] = {
    'torch': (('torch',), '2.4.0', '3.0.0'),
    'mmengine': (('mmengine',), '0.10.0', '0.11.0'),
    'mmcv': (('mmcv', 'mmcv-lite'), '2.0.0', '2.4.0'),
    'mmpretrain': (('mmpretrain',), '1.2.0', '1.3.0'),
}


def _as_tuple(version: str) -> tuple[int, ...]:
    parts = []
    for piece in version.split('+')[0].split('.')[:3]:
        digits = ''.join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def installed_version(names: tuple[str, ...]) -> str | None:
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def check_versions(installed: dict[str, str | None] | None = None) -> None:
    """Raise one ImportError that lists every package outside mlkd's supported range.

    Args:
        installed: package -> version, for tests; read from the environment by default.
    """
    problems = []
    for package, (names, low, high) in REQUIREMENTS.items():
        version = (
            (installed or {}).get(package) if installed is not None else installed_version(names)
        )
        if version is None:
            problems.append(f'  {package}: not installed (need >={low},<{high})')
        elif not _as_tuple(low) <= _as_tuple(version) < _as_tuple(high):
            problems.append(f'  {package}: {version} installed, mlkd needs >={low},<{high}')
    if problems:
        raise ImportError(
            'mlkd found incompatible package versions:\n'
            + '\n'.join(problems)
            + '\nInstall the supported versions with `pip install -r requirements/runtime.txt` '
            '(mmcv-lite is enough; a full mmcv build is optional).'
        )
