"""A regular (non-editable) ``pip install .`` ships configs, tools and the ``mlkd`` command."""

import os
import os.path as osp
import shutil
import subprocess
import sys
import sysconfig

import pytest
import yaml
from conftest import MULTIDIGITS_3D, REPO

SOURCES = (
    'mlkd',
    'configs',
    'tools',
    'requirements',
    'setup.py',
    'pyproject.toml',
    'README.md',
    'LICENSE',
    'NOTICE',
    'MANIFEST.in',
)


@pytest.fixture(scope='module')
def venv(tmp_path_factory):
    """A venv with mlkd installed from a copy of this checkout, its other packages (pip,
    setuptools, wheel, torch, ...) those of the interpreter running the tests.

    Not ``--system-site-packages``: from inside a virtual environment that shows the *base*
    interpreter's packages, not the environment's (in a fresh ``python3 -m venv``: an old
    setuptools and no wheel, where ``pip install --no-build-isolation`` stops at "invalid
    command 'bdist_wheel'"). A ``.pth`` file naming this interpreter's site-packages adds them
    after the new environment's own, without running their ``.pth`` files (so the editable
    install of this checkout, if any, stays out)."""
    root = tmp_path_factory.mktemp('install')
    source = root / 'src'
    source.mkdir()
    for name in SOURCES:
        path = osp.join(REPO, name)
        if osp.isdir(path):
            shutil.copytree(
                path, source / name, ignore=shutil.ignore_patterns('__pycache__', '*.pyc', '.mim')
            )
        else:
            shutil.copy(path, source / name)
    env_dir = root / 'venv'
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(env_dir)], check=True)
    python = str(env_dir / 'bin' / 'python')
    site = subprocess.run(
        [python, '-c', 'import sysconfig; print(sysconfig.get_path("purelib"))'],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    outer = dict.fromkeys(sysconfig.get_path(key) for key in ('purelib', 'platlib'))
    with open(osp.join(site, 'outer_site_packages.pth'), 'w', encoding='utf-8') as f:
        f.write(''.join(f'{path}\n' for path in outer))
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}
    out = subprocess.run(
        [
            python,
            '-m',
            'pip',
            'install',
            '--no-deps',
            '--no-build-isolation',
            '--no-index',
            '-q',
            str(source),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(root),
        timeout=300,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    shutil.rmtree(source)  # the install must not depend on the source folder
    return {
        'python': python,
        'bin': str(env_dir / 'bin'),
        'env': env,
        'cwd': str(root),
        'site': site,
    }


def _run(venv, *args):
    return subprocess.run(
        list(args), capture_output=True, text=True, env=venv['env'], cwd=venv['cwd'], timeout=300
    )


def test_installed_package_carries_configs_tools_and_a_model_index(venv):
    mim = osp.join(venv['site'], 'mlkd', '.mim')
    for relative in (
        'configs/3d/3d_multidigits.py',
        'configs/_base_/default_runtime.py',
        'tools/train.py',
        'tools/analysis_tools/collect_results.py',
        'tools/benchmarks/benchmark_losses.py',
        'tools/dist_run.sh',
        'tools/slurm_test.sh',
    ):
        assert osp.isfile(osp.join(mim, relative)), relative
        assert not osp.islink(osp.join(mim, relative))
    with open(osp.join(mim, 'model-index.yml')) as f:
        index = yaml.safe_load(f)
    folders = sorted(
        d
        for d in os.listdir(osp.join(REPO, 'configs'))
        if d != '_base_'
        and any(name.endswith('.py') for name in os.listdir(osp.join(REPO, 'configs', d)))
    )
    assert index['Import'] == [f'metafiles/{d}.yml' for d in folders]
    listed = []
    for meta in index['Import']:
        with open(osp.join(mim, meta)) as f:
            listed += [model['Config'] for model in yaml.safe_load(f)['Models']]
    expected = sorted(
        f'configs/{d}/{name}'
        for d in folders
        for name in os.listdir(osp.join(REPO, 'configs', d))
        if name.endswith('.py')
    )
    assert sorted(listed) == expected
    assert all(osp.isfile(osp.join(mim, config)) for config in listed)
    shipped = sorted(os.listdir(osp.join(REPO, 'mlkd', 'weights')))
    assert 'manifest.json' in shipped and any(name.endswith('.pth') for name in shipped)
    installed = osp.join(venv['site'], 'mlkd', 'weights')
    assert sorted(os.listdir(installed)) == shipped


def test_installed_distribution_carries_the_license_and_no_test_code(venv):
    """LICENSE and NOTICE travel with the distribution; the tests' oracles stay in tests/."""
    out = _run(
        venv,
        venv['python'],
        '-c',
        'import importlib.metadata as m; print("\\n".join(str(f) for f in m.files("mlkd")))',
    )
    assert out.returncode == 0, out.stderr[-3000:]
    files = out.stdout.split()
    for name in ('LICENSE', 'NOTICE'):
        assert any(f.startswith('mlkd-') and osp.basename(f) == name for f in files), name
    assert not osp.exists(osp.join(venv['site'], 'mlkd', 'testing'))
    assert not [f for f in files if f.startswith(('tests/', 'mlkd/testing/'))]


def test_mlkd_command_resolves_package_configs(venv, tmp_path):
    out = _run(
        venv,
        osp.join(venv['bin'], 'mlkd'),
        'print-config',
        'mlkd::3d/3d_multidigits.py',
        '--cfg-options',
        'train_cfg.max_epochs=3',
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert 'max_epochs=3' in out.stdout and "type='SingleTeacherDistiller'" in out.stdout
    # the installed copies, not this checkout, are what runs, a user's config can inherit an
    # installed one, and unknown commands are named
    user = tmp_path / 'user.py'
    user.write_text(
        "_base_ = ['mlkd::_base_/datasets/multidigits.py']\ntrain_dataloader = dict(batch_size=7)\n"
    )
    where = _run(
        venv,
        venv['python'],
        '-c',
        'import mlkd, mlkd.cli, mlkd.utils.config_paths as c; '
        'from mmengine.config import Config; '
        'print(mlkd.__file__); print(mlkd.cli.tools_dir()); '
        'print(c.resolve_config_path("mlkd::3d/3d_multidigits.py")); '
        f'cfg = Config.fromfile({str(user)!r}); '
        'print(cfg.train_dataloader.dataset.type, cfg.train_dataloader.batch_size, '
        'file=__import__("sys").stderr); '
        'mlkd.cli.main(["no-such-command"])',
    )
    assert where.returncode != 0
    assert 'MultiDigits 7' in where.stderr
    assert "unknown command 'no-such-command'" in where.stderr and 'analyze-logs' in where.stderr
    for line in where.stdout.split():
        assert line.startswith(osp.join(venv['site'], 'mlkd')), line


def test_mlkd_collect_runs_the_installed_tool(venv, tool_runs):
    out = _run(venv, osp.join(venv['bin'], 'mlkd'), 'collect', tool_runs['root'])
    assert out.returncode == 0, out.stderr[-3000:]
    assert (
        '| 3d_multidigits | mldecoder_teacher | mldecoder_student | pd+ndd | 0, 1 | 2 |'
        in out.stdout
    )


def test_source_checkout_prefers_the_repository_configs():
    from mlkd.utils.config_paths import resolve_config_path, source_checkout_root

    assert source_checkout_root() == REPO
    assert resolve_config_path('mlkd::3d/3d_multidigits.py') == MULTIDIGITS_3D
    with pytest.raises(FileNotFoundError, match="package 'no_such_pkg' is not installed"):
        resolve_config_path('no_such_pkg::a/b.py')
    with pytest.raises(
        FileNotFoundError,
        match=r"config 'mlkd::3d/absent\.py' not found \("
        r'looked for .*configs/3d/absent\.py',
    ):
        resolve_config_path('mlkd::3d/absent.py')
