"""Print the versions mlkd runs with: ``python -m mlkd.utils.collect_env``."""

from __future__ import annotations

from mmengine.utils.dl_utils import collect_env as collect_base_env

from mlkd.utils.version_check import REQUIREMENTS, installed_version


def collect_env() -> dict[str, str]:
    """System, torch and CUDA facts from mmengine plus the versions of the mm* packages."""
    import mlkd

    env = dict(collect_base_env())
    for package, (names, low, high) in REQUIREMENTS.items():
        version = installed_version(names)
        dist = next((n for n in names if installed_version((n,)) is not None), names[0])
        env[f'{package} ({dist})'] = f'{version} (supported >={low},<{high})'
    env['mlkd'] = mlkd.__version__
    for optional in ('numpy', 'scikit-learn', 'terminaltables', 'setuptools'):
        env[optional] = installed_version((optional,)) or 'not installed'
    return env


def main() -> None:
    for name, value in collect_env().items():
        print(f'{name}: {value}')


if __name__ == '__main__':
    main()
