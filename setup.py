"""Install mlkd: ``pip install -e .`` (add ``.[tests]`` for the test suite, ``.[timm]`` for timm
networks and safetensors files, ``.[deploy]`` for ONNX export and ONNX Runtime inference).

Besides the ``mlkd`` package this installs, as mim does, ``configs/``, ``tools/`` and a model index
under ``mlkd/.mim/`` (copied at build time, no symlinks), and the ``mlkd`` console command.
"""

import glob
import importlib.metadata
import os
import os.path as osp
import shutil

from setuptools import find_packages, setup

HERE = osp.dirname(osp.abspath(__file__))


def read_requirements(name: str) -> list[str]:
    path = osp.join(HERE, 'requirements', name)
    lines = []
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line:
                lines.append(line)
    return lines


def runtime_requirements() -> list[str]:
    requirements = read_requirements('runtime.txt')
    try:  # a full mmcv build already provides `import mmcv`; do not add mmcv-lite beside it
        importlib.metadata.version('mmcv')
    except importlib.metadata.PackageNotFoundError:
        return requirements
    return [r for r in requirements if not r.startswith('mmcv-lite')]


def read_version() -> str:
    namespace: dict = {}
    with open(osp.join(HERE, 'mlkd', 'version.py'), encoding='utf-8') as f:
        exec(f.read(), namespace)
    return namespace['__version__']


def write_model_index(mim: str) -> None:
    """``model-index.yml`` importing one metafile per config folder (mim's layout).

    Generated here, not copied from ``configs/*/metafile.yml``: those also hold paper cells that
    have no config yet (``Config: null``), which mim's index cannot name, and a folder holding
    only such cells (no ``.py`` yet) is left out.
    """
    folders = sorted(
        d
        for d in os.listdir(osp.join(mim, 'configs'))
        if d != '_base_' and glob.glob(osp.join(mim, 'configs', d, '*.py'))
    )
    os.makedirs(osp.join(mim, 'metafiles'))
    for folder in folders:
        lines = ['Collections:', f'  - Name: {folder}', 'Models:']
        for config in sorted(glob.glob(osp.join(mim, 'configs', folder, '*.py'))):
            name = osp.splitext(osp.basename(config))[0]
            lines += [
                f'  - Name: {name}',
                f'    In Collection: {folder}',
                f'    Config: configs/{folder}/{name}.py',
            ]
        with open(osp.join(mim, 'metafiles', f'{folder}.yml'), 'w', encoding='utf-8') as f:
            f.write('\n'.join(lines) + '\n')
    with open(osp.join(mim, 'model-index.yml'), 'w', encoding='utf-8') as f:
        f.write('Import:\n' + ''.join(f'  - metafiles/{d}.yml\n' for d in folders))


def build_mim_folder() -> None:
    """Copy ``configs/`` and ``tools/`` into ``mlkd/.mim`` and index the configs.

    Copies (not symlinks) so that wheels and ``pip install .`` carry real files. An editable
    install gets a copy too, but mlkd itself reads the repository's ``configs/`` and ``tools/``
    when it runs from a source checkout (``mlkd.utils.config_paths.source_checkout_root``), so
    edits there take effect at once. Building from an sdist, which already holds ``.mim``, copies
    nothing.
    """
    if not osp.isdir(osp.join(HERE, 'configs')):
        return
    mim = osp.join(HERE, 'mlkd', '.mim')
    shutil.rmtree(mim, ignore_errors=True)
    ignore = shutil.ignore_patterns('__pycache__', '*.pyc')
    for name in ('configs', 'tools'):
        shutil.copytree(osp.join(HERE, name), osp.join(mim, name), ignore=ignore)
    write_model_index(mim)


build_mim_folder()

setup(
    name='mlkd',
    version=read_version(),
    description='Multi-label knowledge distillation toolbox on MMEngine and mmpretrain',
    long_description=open(osp.join(HERE, 'README.md'), encoding='utf-8').read(),
    long_description_content_type='text/markdown',
    license='Apache-2.0',
    python_requires='>=3.11',  # add_note (error notes naming a failing sample); README, ruff
    license_files=['LICENSE', 'NOTICE'],
    # mlkd/weights holds data only (no __init__.py): named here so that setuptools installs it as
    # a data package instead of warning that it found an importable folder it was not given.
    packages=find_packages(include=['mlkd', 'mlkd.*']) + ['mlkd.weights'],
    include_package_data=True,
    package_data={
        'mlkd': [
            '.mim/model-index.yml',
            '.mim/metafiles/*.yml',
            '.mim/configs/**/*.py',
            '.mim/tools/**/*.py',
            '.mim/tools/*.sh',
        ],
        'mlkd.weights': ['*.pth', 'manifest.json'],
    },
    entry_points={'console_scripts': ['mlkd = mlkd.cli:main']},
    install_requires=runtime_requirements(),
    extras_require={
        # the test suite checks the deployment tools too
        'tests': read_requirements('tests.txt') + read_requirements('deploy.txt'),
        'deploy': read_requirements('deploy.txt'),
        'optional': read_requirements('optional.txt'),
        'timm': read_requirements('timm.txt'),
    },
    classifiers=[
        'Programming Language :: Python :: 3',
        'Programming Language :: Python :: 3 :: Only',
        'Programming Language :: Python :: 3.11',
        'License :: OSI Approved :: Apache Software License',
        'Topic :: Scientific/Engineering :: Artificial Intelligence',
    ],
)
