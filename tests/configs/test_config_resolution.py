"""A restructuring of configs/ changes nothing a user runs: sample leaves resolve exactly as the
snapshots taken before it (``tests/data/config_snapshots``, written by
``make_config_snapshots.py``; its docstring says when a snapshot may be regenerated).

A snapshot test by necessity: a whole resolved config has no independent reference. What the
papers fix (schedules, pipelines, losses, weights) is checked against them key by key in the
other tests of this folder; the snapshots add that nothing else moved."""

import json
import os.path as osp

import pytest
from make_config_snapshots import CONFIGS, SAMPLE, encode, resolve, snapshot_path

pytestmark = pytest.mark.usefixtures('parse_shipped_configs_once')


def _first_difference(expected, actual, path: str = '') -> str | None:
    """Where ``actual`` departs from ``expected`` (key order included), or ``None``."""
    if type(expected) is not type(actual):
        return f'{path or "<root>"}: {expected!r} != {actual!r}'
    if isinstance(expected, dict):
        if list(expected) != list(actual):
            missing = [k for k in expected if k not in actual]
            added = [k for k in actual if k not in expected]
            if missing or added:
                return f'{path or "<root>"}: keys missing {missing}, added {added}'
            return f'{path or "<root>"}: key order {list(expected)} != {list(actual)}'
        for key in expected:
            found = _first_difference(expected[key], actual[key], f'{path}.{key}')
            if found:
                return found
        return None
    if isinstance(expected, list):
        if len(expected) != len(actual):
            return f'{path}: {len(expected)} items != {len(actual)}: {expected!r} != {actual!r}'
        for index, (left, right) in enumerate(zip(expected, actual)):
            found = _first_difference(left, right, f'{path}[{index}]')
            if found:
                return found
        return None
    return None if expected == actual else f'{path}: {expected!r} != {actual!r}'


def test_the_sample_spans_every_config_folder():
    import glob

    folders = {
        osp.relpath(p, CONFIGS).split(osp.sep)[0]
        for p in glob.glob(osp.join(CONFIGS, '**', '*.py'), recursive=True)
    }
    folders.discard('_base_')
    assert folders == {leaf.split('/')[0] for leaf in SAMPLE}


@pytest.mark.parametrize('leaf', SAMPLE)
def test_leaf_resolves_as_its_snapshot(leaf):
    with open(snapshot_path(leaf), encoding='utf-8') as f:
        expected = json.load(f)
    difference = _first_difference(expected, resolve(leaf))
    assert difference is None, f'configs/{leaf} resolves differently: {difference}'


def test_the_comparison_sees_order_types_and_values():
    snapshot = encode({'model': {'a': 1, 'b': (1, 2)}, 'x': [1.0]})
    assert _first_difference(snapshot, encode({'model': {'a': 1, 'b': (1, 2)}, 'x': [1.0]})) is None
    assert 'key order' in _first_difference(
        snapshot, encode({'model': {'b': (1, 2), 'a': 1}, 'x': [1.0]})
    )
    assert _first_difference(snapshot, encode({'model': {'a': 1, 'b': [1, 2]}, 'x': [1.0]}))
    assert _first_difference(snapshot, encode({'model': {'a': 1, 'b': (1, 2)}, 'x': [1]}))
    assert _first_difference(snapshot, encode({'model': {'a': 2, 'b': (1, 2)}, 'x': [1.0]}))


def test_path_expansions_are_compared_by_the_file_they_name():
    from make_config_snapshots import REPO

    assert (
        encode(f'{REPO}/configs/_base_/pairs/../../cifar100/x.py')
        == encode(f'{REPO}/configs/cifar100/x.py')
        == '<REPO>/configs/cifar100/x.py'
    )
