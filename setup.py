"""Install mlkd: ``pip install -e .`` (add ``.[tests]`` for the test suite)."""
import importlib.metadata
import os.path as osp

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


setup(
    name='mlkd',
    version=read_version(),
    description='Multi-label knowledge distillation toolbox on MMEngine and mmpretrain',
    long_description=open(osp.join(HERE, 'README.md'), encoding='utf-8').read(),
    long_description_content_type='text/markdown',
    license='Apache-2.0',
    python_requires='>=3.10',
    packages=find_packages(include=['mlkd', 'mlkd.*']),
    include_package_data=True,
    install_requires=runtime_requirements(),
    extras_require={
        'tests': read_requirements('tests.txt'),
        'optional': read_requirements('optional.txt'),
    },
    classifiers=[
        'Programming Language :: Python :: 3',
        'License :: OSI Approved :: Apache Software License',
        'Topic :: Scientific/Engineering :: Artificial Intelligence',
    ],
)
