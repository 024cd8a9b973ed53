"""Every registered loss keeps the value, gradient and state behaviour recorded before the
losses-layer refactor (``tests/data/loss_snapshots.json``, see ``make_loss_snapshots.py``)."""

import json
import os

import pytest
from loss_cases import CASES, record

SNAPSHOTS = os.path.join(os.path.dirname(__file__), '..', '..', 'data', 'loss_snapshots.json')


with open(SNAPSHOTS) as f:
    RECORDED = json.load(f)['values']


def test_every_recorded_loss_is_still_registered_with_a_case():
    import mlkd.models  # noqa: F401
    from mlkd.registry import MODELS

    registered = {
        name
        for name, cls in MODELS.module_dict.items()
        if cls.__module__.startswith('mlkd.models.losses')
    }
    assert set(RECORDED) <= registered and set(RECORDED) <= set(CASES)


@pytest.mark.parametrize('name', sorted(RECORDED))
def test_value_and_gradient_unchanged(name):
    expected = RECORDED[name]
    got = record(name)
    assert len(got) == len(expected)
    for seen, stored in zip(got, expected):
        assert set(seen) == set(stored)
        for key, value in stored.items():
            assert seen[key] == pytest.approx(value, rel=1e-6, abs=1e-9), (name, key)
