"""The supported Python is stated once and agrees everywhere: setup.py's python_requires, the
README's set-up line, ruff's target version; and the interpreter running the tests meets it."""

import ast
import os.path as osp
import re
import sys
import tomllib

from conftest import REPO


def _python_requires() -> tuple[int, int]:
    with open(osp.join(REPO, 'setup.py'), encoding='utf-8') as file:
        tree = ast.parse(file.read())
    values = [
        node.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.keyword) and node.arg == 'python_requires'
    ]
    assert len(values) == 1, values
    found = re.fullmatch(r'>=(\d+)\.(\d+)', values[0])
    assert found, values[0]
    return int(found[1]), int(found[2])


def test_setup_readme_and_ruff_state_the_same_minimum_python():
    minimum = _python_requires()
    # mlkd adds notes to exceptions (BaseException.add_note, new in 3.11).
    assert minimum >= (3, 11)
    with open(osp.join(REPO, 'README.md'), encoding='utf-8') as file:
        stated = re.findall(r'Python (?:≥|>=) ?(\d+)\.(\d+)', file.read())
    assert stated and {(int(a), int(b)) for a, b in stated} == {minimum}, stated
    with open(osp.join(REPO, 'pyproject.toml'), 'rb') as file:
        target = tomllib.load(file)['tool']['ruff']['target-version']
    assert target == f'py{minimum[0]}{minimum[1]}'
    assert sys.version_info[:2] >= minimum
