"""Every third-party import of mlkd and its tools is a declared requirement.

Read statically (``ast``), so an import inside a function or behind a command-line switch counts
as well: ``mlkd/`` and ``tools/`` may import what ``requirements/runtime.txt`` or an extra of
``setup.py`` other than ``tests`` declares. A package installed only as a dependency of another
(scipy under scikit-learn, matplotlib under mmengine) is not declared by that: the other may
drop it.
"""

from __future__ import annotations

import ast
import functools
import glob
import importlib.metadata
import os.path as osp
import re
import sys

from conftest import REPO

#: Import names whose distribution differs from the name when the distribution is not installed
#: (installed ones are looked up in ``importlib.metadata.packages_distributions``).
FALLBACK_DISTRIBUTIONS = {'PIL': 'pillow', 'yaml': 'pyyaml', 'sklearn': 'scikit-learn'}


def _normalise(name: str) -> str:
    return re.sub(r'[-_.]+', '-', name).lower()


def _requirement_names(file: str) -> set[str]:
    names = set()
    with open(osp.join(REPO, 'requirements', file), encoding='utf-8') as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line:
                names.add(_normalise(re.match(r'[A-Za-z0-9_.-]+', line).group(0)))
    return names


def extras() -> dict[str, list[str]]:
    """``extras_require`` of setup.py: extra -> the requirements files it reads (an extra may
    join several: ``read_requirements('a.txt') + read_requirements('b.txt')``)."""
    with open(osp.join(REPO, 'setup.py'), encoding='utf-8') as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == 'extras_require':
            return {
                key.value: [
                    call.args[0].value for call in ast.walk(value) if isinstance(call, ast.Call)
                ]
                for key, value in zip(node.value.keys, node.value.values)
            }
    raise AssertionError('setup.py declares no extras_require')


def declared(with_tests: bool = False) -> set[str]:
    """Distributions of runtime.txt and of the extras (of ``tests`` too if ``with_tests``)."""
    names = _requirement_names('runtime.txt')
    for extra, files in extras().items():
        if extra != 'tests' or with_tests:
            for file in files:
                names |= _requirement_names(file)
    return names


@functools.cache
def _modules_in(folder: str, recursive: bool = False) -> frozenset[str]:
    pattern = osp.join(folder, '**', '*') if recursive else osp.join(folder, '*')
    return frozenset(
        osp.splitext(osp.basename(p))[0] for p in glob.glob(pattern, recursive=recursive)
    )


def _local_names(path: str) -> frozenset[str]:
    """Modules a file can import from its own folder (a script's helpers beside it); for a tool,
    any module under ``tools/`` (whether a tool may import another is not checked here)."""
    if path.startswith(osp.join(REPO, 'tools') + osp.sep):
        return _modules_in(osp.join(REPO, 'tools'), recursive=True)
    return _modules_in(osp.dirname(path))


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    caught = handler.type
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return any(
        isinstance(n, ast.Name) and n.id in ('ImportError', 'ModuleNotFoundError') for n in names
    )


@functools.cache
def third_party_imports(roots: tuple[str, ...]) -> dict[str, set[str]]:
    """Top-level imported name -> the files importing it, for absolute imports of neither the
    standard library, mlkd nor a module of the importing file's own folder. An import inside
    ``try: ... except ImportError`` (or ModuleNotFoundError) is an optional one, with its own
    message naming the package to install, and is not counted."""
    found: dict[str, set[str]] = {}
    for root in roots:
        for path in glob.glob(osp.join(REPO, root, '**', '*.py'), recursive=True):
            if f'{osp.sep}.mim{osp.sep}' in path:
                continue
            with open(path, encoding='utf-8') as f:
                tree = ast.parse(f.read(), path)
            names = set()
            optional = {
                id(inner)
                for node in ast.walk(tree)
                if isinstance(node, ast.Try)
                and any(_catches_import_error(h) for h in node.handlers)
                for statement in node.body
                for inner in ast.walk(statement)
            }
            for node in ast.walk(tree):
                if id(node) in optional:
                    continue
                if isinstance(node, ast.Import):
                    names |= {alias.name.split('.')[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names.add(node.module.split('.')[0])
            local = _local_names(path)
            for name in names - set(sys.stdlib_module_names) - {'mlkd', '__future__'} - local:
                found.setdefault(name, set()).add(osp.relpath(path, REPO))
    return found


@functools.cache
def _installed_distributions() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def distributions_of(name: str) -> set[str]:
    installed = _installed_distributions().get(name, [])
    return {_normalise(d) for d in installed} | {_normalise(FALLBACK_DISTRIBUTIONS.get(name, name))}


def undeclared(roots: tuple[str, ...], allowed: set[str]) -> dict[str, set[str]]:
    """Imported name -> importing files, for the names no ``allowed`` distribution provides."""
    return {
        name: files
        for name, files in third_party_imports(roots).items()
        if not distributions_of(name) & allowed
    }


def test_every_third_party_import_is_declared():
    missing = undeclared(('mlkd', 'tools'), declared())
    assert not missing, (
        'imported but declared neither in requirements/runtime.txt nor in an extra of setup.py:\n'
        + '\n'.join(f'{name} ({", ".join(sorted(files)[:3])})' for name, files in missing.items())
    )


def test_the_check_sees_imports_inside_functions_and_knows_distribution_names():
    # mlkd/utils/stats.py imports scipy inside a function
    imports = third_party_imports(('mlkd', 'tools'))
    assert 'mlkd/utils/stats.py' in imports['scipy']
    assert 'scikit-learn' in distributions_of('sklearn') and 'pillow' in distributions_of('PIL')
    missing = undeclared(('mlkd', 'tools'), {'numpy'})
    assert 'numpy' not in missing and {'torch', 'mmengine'} <= set(missing)
    assert 'pytest' in declared(with_tests=True) - declared(with_tests=False)
