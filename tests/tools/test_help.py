"""Every script under ``tools/`` answers ``--help`` with exit status 0, and none imports ``tests/``
or another script: what tools share lives in the package (``mlkd.apis``, ``mlkd.utils``).

``python TOOL --help`` in its own interpreter would cost one ``import mlkd`` (about 2 s) per tool,
so one fresh interpreter runs them all in turn: the script executed as ``__main__`` with
``sys.argv = [TOOL, '--help']``, but without its own folder on ``sys.path`` (where ``python TOOL``
puts it), so that a script importing a sibling fails here. A tool that fails to import, or that
does its work before parsing its arguments, shows up here with its traceback or output.
"""

import ast
import glob
import json
import os
import os.path as osp
import subprocess
import sys

import pytest
from conftest import REPO

TOOLS_DIR = osp.join(REPO, 'tools')


def _is_script(path: str) -> bool:
    with open(path, encoding='utf-8') as f:
        return "if __name__ == '__main__':" in f.read()


ALL_PY = sorted(
    osp.relpath(p, REPO) for p in glob.glob(osp.join(TOOLS_DIR, '**', '*.py'), recursive=True)
)
SCRIPTS = [p for p in ALL_PY if _is_script(osp.join(REPO, p))]

#: Runs each script given on the command line as ``python SCRIPT --help`` would; prints one JSON
#: object: script -> exit code (or the exception), the tail of its output, and the modules it
#: loaded from ``tests/``.
DRIVER = r"""
import contextlib, io, json, os, runpy, sys, traceback
tests_dir = os.path.join(os.getcwd(), 'tests') + os.sep
results = {}
for script in sys.argv[1:]:
    out, argv = io.StringIO(), sys.argv
    sys.argv = [script, '--help']
    before = set(sys.modules)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            runpy.run_path(script, run_name='__main__')
        code = 'returned without exiting'
    except SystemExit as done:
        code = done.code
    except BaseException:
        code = traceback.format_exc()
    finally:
        sys.argv = argv
    from_tests = sorted(name for name in set(sys.modules) - before
                        if (getattr(sys.modules[name], '__file__', None) or '')
                        .startswith(tests_dir))
    text = out.getvalue()  # a long help keeps its usage line (head) and any error (tail)
    text = text if len(text) <= 6000 else text[:3000] + '\n...\n' + text[-3000:]
    results[script] = dict(code=code, output=text, from_tests=from_tests)
print(json.dumps(results))
"""


@pytest.fixture(scope='module')
def help_results():
    env = {**os.environ, 'PYTHONPATH': REPO, 'MPLBACKEND': 'Agg'}
    run = subprocess.run(
        [sys.executable, '-c', DRIVER, *SCRIPTS],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_the_tool_folders_are_found():
    """The layout (mmpretrain's): tools by job, and the entry points at the top."""
    assert {
        'tools/train.py',
        'tools/test.py',
        'tools/misc/print_config.py',
        'tools/analysis_tools/collect_results.py',
        'tools/benchmarks/benchmark_losses.py',
        'tools/visualization/browse_dataset.py',
    } <= set(SCRIPTS)
    assert not osp.exists(osp.join(TOOLS_DIR, 'analysis'))
    folders = {osp.dirname(p) for p in ALL_PY}
    assert folders == {
        'tools',
        'tools/analysis_tools',
        'tools/benchmarks',
        'tools/deployment',
        'tools/misc',
        'tools/visualization',
    }
    # gpu_check.py checks rather than times, beside the benchmarks whose helpers it shares
    # (issue 32 names it so).
    assert all(
        osp.basename(p).startswith('benchmark_') == (osp.dirname(p) == 'tools/benchmarks')
        for p in SCRIPTS
        if p != 'tools/benchmarks/gpu_check.py'
    )


def test_every_file_under_tools_is_a_script_importing_no_other():
    """Code that two scripts share is in the package, not in a script the other imports."""
    assert set(ALL_PY) == set(SCRIPTS), set(ALL_PY) - set(SCRIPTS)
    names = {osp.splitext(osp.basename(p))[0] for p in ALL_PY}
    for script in SCRIPTS:
        with open(osp.join(REPO, script), encoding='utf-8') as f:
            tree = ast.parse(f.read())
        imported = {
            alias.name.split('.')[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        } | {
            node.module.split('.')[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module
        }
        assert not imported & (names | {'tests', 'conftest'}), (script, imported & names)
        assert 'sys.path' not in ast.unparse(tree), f'{script} edits sys.path'


def test_mlkd_commands_name_existing_tools():
    from mlkd.cli import COMMANDS

    assert set(f'tools/{script}' for script in COMMANDS.values()) <= set(SCRIPTS)


@pytest.mark.parametrize('script', SCRIPTS)
def test_tool_answers_help(help_results, script):
    result = help_results[script]
    assert result['code'] in (0, None), f'{script} --help: {result["code"]}\n{result["output"]}'
    assert 'usage:' in result['output'], result['output']
    assert not result['from_tests'], f'{script} imports from tests/: {result["from_tests"]}'
