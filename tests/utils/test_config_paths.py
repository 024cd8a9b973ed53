"""Config-path resolution has one home (mlkd.utils.config_paths), and mlkd.utils imports no cycle.

mlkd.utils.cli and mlkd.utils.compat used to import each other (each inside a function, so the
circle only showed when one was imported on its own in a particular order).
"""

import ast
import glob
import os
import os.path as osp
import subprocess
import sys

import pytest
from conftest import MULTIDIGITS_3D, REPO

UTILS = osp.join(REPO, 'mlkd', 'utils')


def _imports_of(path: str) -> set[str]:
    """Every ``mlkd.utils.<module>`` that a file imports, at the top or inside a function."""
    with open(path, encoding='utf-8') as f:
        tree = ast.parse(f.read())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module, *(f'{node.module}.{a.name}' for a in node.names)]
        elif isinstance(node, ast.ImportFrom):  # relative, inside mlkd/utils
            names = [f'mlkd.utils.{node.module or a.name}' for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found.update(n for n in names if n.startswith('mlkd.utils.'))
    return found


def test_mlkd_utils_modules_import_no_cycle():
    modules = {
        f'mlkd.utils.{osp.basename(p)[:-3]}': p
        for p in glob.glob(osp.join(UTILS, '*.py'))
        if not p.endswith('__init__.py')
    }
    graph = {name: _imports_of(path) & set(modules) - {name} for name, path in modules.items()}
    assert 'mlkd.utils.config_paths' in graph['mlkd.utils.cli']
    assert 'mlkd.utils.config_paths' in graph['mlkd.utils.compat']
    assert graph['mlkd.utils.config_paths'] == set()

    def reachable(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    cycles = sorted(name for name in graph if name in reachable(name))
    assert not cycles, f'import cycle through {cycles}: {graph}'


@pytest.mark.parametrize(
    'module', ['mlkd.utils.config_paths', 'mlkd.utils.cli', 'mlkd.utils.compat']
)
def test_each_module_imports_first_in_a_fresh_interpreter(module):
    """Imported first and on its own (``mlkd/__init__``, which applies the shims, is kept out
    of the way), each module loads and does its job without the other."""
    code = (
        'import importlib.util, sys\n'
        'spec = importlib.util.spec_from_file_location(\n'
        f"    'mlkd', {osp.join(REPO, 'mlkd', '__init__.py')!r},\n"
        f'    submodule_search_locations=[{osp.join(REPO, "mlkd")!r}])\n'
        "sys.modules['mlkd'] = importlib.util.module_from_spec(spec)  # not executed\n"
        f'import {module} as m\n'
        f"if {module!r} == 'mlkd.utils.compat':\n"
        '    m.apply(); print(m.applied_shims())\n'
        'else:\n'
        "    print(m.resolve_config_path('mlkd::3d/3d_multidigits.py'))\n"
        "print(sorted(n for n in sys.modules if n.startswith('mlkd.utils.')))\n"
    )
    out = subprocess.run(
        [sys.executable, '-c', code],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, 'PYTHONPATH': REPO},
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.strip().splitlines()
    loaded = ast.literal_eval(lines[-1])
    if module == 'mlkd.utils.compat':
        from mlkd.utils import compat

        assert ast.literal_eval(lines[-2]) == compat.applied_shims()
        assert 'mlkd.utils.cli' not in loaded
    else:
        assert lines[-2] == MULTIDIGITS_3D
        assert 'mlkd.utils.compat' not in loaded
    if module == 'mlkd.utils.config_paths':
        assert loaded == ['mlkd.utils.config_paths']
