"""tools/analysis_tools/intra_class_study.py: the summary (mean ± std per arm, paired differences
with a 95 % t-interval) against a hand computation, from a results store whose runs are all
finished (so nothing trains), and the refusals."""

from __future__ import annotations

import csv
import json
import math
import os.path as osp
import statistics

import pytest
from conftest import assert_png, load_tool

from mlkd.utils.output_policy import OutputExistsError

TOOL = load_tool('analysis_tools/intra_class_study')
#: t quantile 0.975 with 2 degrees of freedom (tables: 4.303)
T_975_DF2 = 4.302652729916
RUNS = ('teacher', 'teacher_intra_class', 'student', 'kd', 'ours', 'kd_rkd', 'ours_rkd')


def _results() -> dict:
    """Three seeds; every run's val = test - 1, test = 90 + seed + offset of the run."""
    offsets = dict(zip(RUNS, (5.0, 5.5, 0.0, 1.0, 1.6, 1.2, 0.9)))
    results = {}
    for seed in (0, 1, 2):
        for run in RUNS:
            test = 90 + seed + offsets[run] + (0.3 * seed if run == 'ours' else 0.0)
            results.setdefault(str(seed), {})[run] = {
                'val': test - 1,
                'test': test,
                'cpu_seconds': 1.0,
            }
    return results


def test_summary_equals_a_hand_computation():
    arms, pairs = TOOL.summarize(_results(), [0, 1, 2])
    by_run = {arm['run']: arm for arm in arms}
    assert by_run['teacher']['test'] == [95.0, 96.0, 97.0]
    assert by_run['teacher_intra_class']['val'] == [94.5, 95.5, 96.5]
    kd = next(p for p in pairs if p['comparison'].startswith('KD student'))
    # ours − kd per seed: 0.6, 0.9, 1.2 -> mean 0.9, sd 0.3, half width t * 0.3 / sqrt(3)
    diffs = [0.6, 0.9, 1.2]
    half = T_975_DF2 * statistics.stdev(diffs) / math.sqrt(3)
    for split in ('val', 'test'):
        assert kd[split] == pytest.approx((0.9, 0.9 - half, 0.9 + half), abs=1e-9)
    teacher = next(p for p in pairs if p['comparison'].startswith('teacher'))
    # A constant difference (0.5 every seed): zero-width interval.
    assert teacher['test'] == pytest.approx((0.5, 0.5, 0.5), abs=1e-9)
    rkd = next(p for p in pairs if p['comparison'].startswith('KD+RKD'))
    assert rkd['test'] == pytest.approx((-0.3, -0.3, -0.3), abs=1e-9)


def test_paired_interval_checks_lengths():
    with pytest.raises(ValueError, match='differ in length: 2 vs 3'):
        TOOL.paired_interval([1.0, 2.0], [1.0, 2.0, 3.0])


def test_finished_runs_are_reused_and_outputs_written(tmp_path):
    work, out = tmp_path / 'work', tmp_path / 'out'
    work.mkdir()
    (work / 'results.json').write_text(json.dumps(_results()))
    TOOL.main(['--seeds', '0', '1', '2', '--work-dir', str(work), '--out-dir', str(out)])
    table = (out / 'intra_class_study.md').read_text(encoding='utf-8')
    # teacher: 95, 96, 97 -> 96.00 ± 1.00; the KD difference 0.9 [0.9 ∓ half].
    assert '| plain teacher | 95.00 ± 1.00 | 96.00 ± 1.00 | 95.0, 96.0, 97.0 |' in table
    half = T_975_DF2 * 0.3 / math.sqrt(3)
    assert f'+0.90 [{0.9 - half:+.2f}, {0.9 + half:+.2f}]' in table
    with open(out / 'intra_class_study.csv', encoding='utf-8') as file:
        rows = list(csv.DictReader(file))
    assert len(rows) == len(RUNS) * 3 and {r['run'] for r in rows} == set(RUNS)  # x 3 seeds
    assert json.loads((out / 'intra_class_study.json').read_text()) == _results()
    assert_png(str(out / 'intra_class_study.png'))
    with pytest.raises(OutputExistsError, match='intra_class_study.md. exists; pass --overwrite'):
        TOOL.main(['--seeds', '0', '1', '2', '--work-dir', str(work), '--out-dir', str(out)])


def test_fewer_than_two_distinct_seeds_are_refused(tmp_path):
    for seeds in (['0'], ['1', '1']):
        with pytest.raises(SystemExit, match='at least two distinct seeds'):
            TOOL.main(['--seeds', *seeds, '--out-dir', str(tmp_path)])
    assert not osp.exists(tmp_path / 'intra_class_study.md')


# ----------------------------------------------------------------------------- RKD weight search
def test_split_rkd_is_the_same_loss_with_its_terms_apart():
    import torch

    from mlkd.registry import MODELS

    losses = {
        'kd': dict(type='SoftmaxKDLoss', loss_weight=0.9),
        'rkd': dict(type='RKDLoss', distance_weight=25.0, angle_weight=50.0, loss_weight=1.0),
    }
    split = TOOL.split_rkd(losses, 0.1)
    assert set(split) == {'kd', 'rkd_distance', 'rkd_angle'} and split['kd'] == losses['kd']
    assert losses['rkd']['loss_weight'] == 1.0  # the input is left as it was
    g = torch.Generator().manual_seed(0)
    s, t = torch.randn(6, 5, generator=g), torch.randn(6, 7, generator=g)
    whole = MODELS.build(dict(losses['rkd'], loss_weight=0.1))(s, t)
    parts = sum(MODELS.build(split[name])(s, t) for name in ('rkd_distance', 'rkd_angle'))
    assert float(parts) == pytest.approx(float(whole), rel=1e-6)


def _search_cells(weights, seeds) -> dict:
    """val = 60 + 10·log10(weight)-ish per weight + seed; constant diagnostics per term."""
    terms = {
        t: {'value': [1.0, 3.0], 'grad_norm': [2.0, 4.0 + i]} for i, t in enumerate(TOOL.TERM_KEYS)
    }
    offsets = {1.0: -30.0, 0.1: 2.0, 0.01: 1.0}
    return {
        str(s): {
            f'{w:g}': {
                'val': 60.0 + offsets[w] + s + (0.5 * s if w == 0.1 else 0.0),
                'agreement': 50.0 + s,
                'steps': [1, 9],
                'terms': terms,
                'cpu_seconds': 1.0,
            }
            for w in weights
        }
        for s in seeds
    }


def test_search_summary_equals_a_hand_computation():
    weights, seeds = [1.0, 0.1, 0.01], [0, 1, 2]
    rows = TOOL.summarize_search(
        _search_cells(weights, seeds), {'0': 60.0, '1': 61.0, '2': 62.0}, seeds, weights
    )
    by_weight = {r['weight']: r for r in rows}
    # weight 0.1 − student per seed: 2.0, 2.5, 3.0 -> mean 2.5, sd 0.5
    half = T_975_DF2 * 0.5 / math.sqrt(3)
    assert by_weight[0.1]['vs_student'] == pytest.approx((2.5, 2.5 - half, 2.5 + half))
    assert by_weight[1.0]['vs_student'] == pytest.approx((-30.0, -30.0, -30.0))
    assert by_weight[0.01]['agreement'] == [50.0, 51.0, 52.0]
    # medians over every step of every seed: grad norms [2, 4 + i] x 3 seeds -> (2 + 4 + i) / 2
    assert by_weight[1.0]['loss_rkd_angle/grad_norm'] == pytest.approx((2.0 + 4.0 + 3) / 2)
    assert by_weight[1.0]['loss_cls/value'] == pytest.approx(2.0)
    assert TOOL.chosen_weight(rows) == 0.1


def test_search_from_finished_runs_writes_its_outputs(tmp_path):
    weights, seeds = [1.0, 0.1, 0.01], [0, 1]
    work, out = tmp_path / 'work', tmp_path / 'out'
    (work / 'rkd_search').mkdir(parents=True)
    (work / 'results.json').write_text(json.dumps(_results()))
    (work / 'rkd_search' / 'results.json').write_text(json.dumps(_search_cells(weights, seeds)))
    argv = ['--seeds', '0', '1', '--work-dir', str(work), '--out-dir', str(out)]
    rows = TOOL.main([*argv, '--search-rkd-weights', '1', '0.1', '0.01'])
    assert [r['weight'] for r in rows] == weights
    table = (out / 'intra_class_rkd_search.md').read_text(encoding='utf-8')
    assert '| 1 (paper) | (25, 50) |' in table
    assert 'Chosen (highest mean val top-1): RKD loss weight 0.1.' in table
    with open(out / 'intra_class_rkd_search.csv', encoding='utf-8') as file:
        assert len(list(csv.DictReader(file))) == len(weights) * len(seeds)
    assert_png(str(out / 'intra_class_rkd_search.png'))
    with pytest.raises(SystemExit, match='distinct positive weights'):
        TOOL.main([*argv, '--search-rkd-weights', '1', '1', '--overwrite'])
