"""mlkd.apis.intra_class: the study's summary (mean ± std per arm, paired differences with a 95 %
t-interval) and the RKD weight search's against hand computations, and how the search is declared
(the runs themselves: tests/tools/analysis_tools/test_intra_class_study.py)."""

import math
import statistics

import pytest
import torch

from mlkd.apis import intra_class, intra_class_report
from mlkd.apis.study import run_identities
from mlkd.registry import MODELS
from mlkd.utils.fingerprint import fingerprint

#: t quantile 0.975 with 2 degrees of freedom (tables: 4.303)
T_975_DF2 = 4.302652729916
RUNS = tuple(intra_class.INTRA_CLASS.runs)


def study_results() -> dict:
    """Three seeds; every run's val = test - 1, test = 90 + seed + offset of the run."""
    offsets = dict(zip(RUNS, (5.0, 5.5, 0.0, 1.0, 1.6, 1.2, 0.9)))
    results = {}
    for seed in (0, 1, 2):
        for run in RUNS:
            test = 90 + seed + offsets[run] + (0.3 * seed if run == 'ours' else 0.0)
            results.setdefault(str(seed), {})[run] = {'val': test - 1, 'test': test}
    return results


def test_summary_equals_a_hand_computation():
    arms, pairs = intra_class.summarize(study_results(), [0, 1, 2])
    by_run = {arm['run']: arm for arm in arms}
    assert by_run['teacher']['test'] == [95.0, 96.0, 97.0]
    assert by_run['teacher_intra_class']['val'] == [94.5, 95.5, 96.5]
    kd = next(p for p in pairs if p['comparison'].startswith('KD student'))
    # ours − kd per seed: 0.6, 0.9, 1.2 -> mean 0.9, sd 0.3, half width t * 0.3 / sqrt(3)
    half = T_975_DF2 * statistics.stdev([0.6, 0.9, 1.2]) / math.sqrt(3)
    for split in ('val', 'test'):
        assert kd[split] == pytest.approx((0.9, 0.9 - half, 0.9 + half), abs=1e-9)
    teacher = next(p for p in pairs if p['comparison'].startswith('teacher'))
    # A constant difference (0.5 every seed): zero-width interval.
    assert teacher['test'] == pytest.approx((0.5, 0.5, 0.5), abs=1e-9)
    rkd = next(p for p in pairs if p['comparison'].startswith('KD+RKD'))
    assert rkd['test'] == pytest.approx((-0.3, -0.3, -0.3), abs=1e-9)


def test_split_rkd_is_the_same_loss_with_its_terms_apart():
    losses = {
        'kd': dict(type='SoftmaxKDLoss', loss_weight=0.9),
        'rkd': dict(type='RKDLoss', distance_weight=25.0, angle_weight=50.0, loss_weight=1.0),
    }
    split = intra_class.split_rkd(losses, 0.1)
    assert set(split) == {'kd', 'rkd_distance', 'rkd_angle'} and split['kd'] == losses['kd']
    assert losses['rkd']['loss_weight'] == 1.0  # the input is left as it was
    g = torch.Generator().manual_seed(0)
    s, t = torch.randn(6, 5, generator=g), torch.randn(6, 7, generator=g)
    whole = MODELS.build(dict(losses['rkd'], loss_weight=0.1))(s, t)
    parts = sum(MODELS.build(split[name])(s, t) for name in ('rkd_distance', 'rkd_angle'))
    assert float(parts) == pytest.approx(float(whole), rel=1e-6)


def search_cells(weights, seeds) -> dict:
    """val = 60 + an offset per weight + seed; constant diagnostics per term."""
    terms = {
        t: {'value': [1.0, 3.0], 'grad_norm': [2.0, 4.0 + i]}
        for i, t in enumerate(intra_class.TERM_KEYS)
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
    rows = intra_class.summarize_search(
        search_cells(weights, seeds), {'0': 60.0, '1': 61.0, '2': 62.0}, seeds, weights
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
    assert intra_class.chosen_weight(rows) == 0.1


def test_the_search_chart_names_its_data_and_draws_the_terms_without_the_paper_weight(
    tmp_path, monkeypatch
):
    """A search of weights below the paper's (1) still draws its per-term curves (at the largest
    searched weight) and names the study's data in the title, not another study's."""
    figures = []
    monkeypatch.setattr(
        intra_class_report, 'save_figure', lambda figure, path, **kw: figures.append(figure)
    )
    weights, seeds = [0.1, 0.01], [0, 1, 2]
    search = search_cells(weights, seeds)
    student = {'0': 60.0, '1': 61.0, '2': 62.0}
    rows = intra_class.summarize_search(search, student, seeds, weights)
    outputs = intra_class.output_files(str(tmp_path), intra_class.SEARCH_NAME)
    intra_class_report.write_search_outputs(
        outputs,
        rows,
        search,
        student,
        seeds,
        0.1,
        data='DigitObjects',
        overwrite=False,
        log=lambda line: None,
    )
    (figure,) = figures
    assert 'on DigitObjects' in figure._suptitle.get_text()
    top = figure.axes[:3]
    assert [len(ax.lines) for ax in top] == [len(intra_class.TERM_KEYS)] * 3
    assert 'RKD weight 0.1' in top[0].get_title() and 'RKD weight 0.1' in top[1].get_title()
    assert 'RKD weight 0.01' in top[2].get_title()  # the largest is chosen: the other end


def test_the_search_shares_the_studys_teacher_and_student(tmp_path):
    """Its plain teachers and students alone are the study's runs (one result serves both); each
    searched run is the paper-weight KD+RKD with its RKD scaled and split, from the plain teacher
    of its seed, diagnosed every ``interval`` iterations, scored against its teacher on val."""
    work, seeds = str(tmp_path), [0, 1]
    search = intra_class.search_study([0.1, 0.01], interval=4)
    cells = run_identities(search, list(search.runs), seeds, work)
    study = run_identities(intra_class.INTRA_CLASS, ['teacher', 'student'], seeds, work)
    for key, identity in study.items():
        assert fingerprint(cells[key]) == fingerprint(identity)
    for seed in seeds:  # the same losses for every seed (the options are not consumed)
        for weight in (0.1, 0.01):
            cell = cells[(intra_class.search_run_name(weight), seed)]
            losses = cell['model']['distill_losses']
            assert set(losses) == {'kd', 'rkd_distance', 'rkd_angle'}
            distance, angle = losses['rkd_distance'], losses['rkd_angle']
            assert (distance['distance_weight'], distance['angle_weight']) == (25.0, 0.0)
            assert (angle['distance_weight'], angle['angle_weight']) == (0.0, 50.0)
            assert distance['loss_weight'] == angle['loss_weight'] == pytest.approx(weight)
            assert cell['model']['teacher_ckpt'].startswith('<run teacher: ')
            diagnostics = dict(type='LossDiagnosticsHook', interval=4, module='student')
            assert diagnostics in cell['custom_hooks']
            assert cell['val_evaluator'][-1] == dict(type='DistillFidelity', mode='single_label')
    assert not any(run.test for name, run in search.runs.items() if name.startswith('rkd_'))


@pytest.mark.parametrize('data', sorted(intra_class.CONFIG_FOLDERS))
def test_each_studys_runs_and_search_read_its_own_data(data, tmp_path):
    """The study on each data trains the configs of its folder, all of the same runs, and its
    search scales that folder's paper-weight KD+RKD: no run of one study reads the other's data."""
    study, folder = intra_class.intra_class_study(data), intra_class.CONFIG_FOLDERS[data]
    assert tuple(study.runs) == RUNS
    assert all(run.config.startswith(f'{folder}/') for run in study.runs.values())
    search = intra_class.search_study([0.1], interval=4, data=data)
    assert search.runs['rkd_w0.1'].config == f'{folder}/kd_rkd_paper_weight.py'
    # A val-only call reads no test at all, the study's runs it shares included.
    assert search.runs['teacher'].test and not search.runs['rkd_w0.1'].test
    val_only = intra_class.search_study([0.1], interval=4, data=data, val_only=True)
    assert not any(run.test for run in val_only.runs.values())
    assert not any(
        run.test for run in intra_class.intra_class_study(data, test=False).runs.values()
    )
    identities = run_identities(study, ['teacher', 'student'], [0], str(tmp_path))
    classes = {identity['data_preprocessor']['num_classes'] for identity in identities.values()}
    assert classes == {100 if data == 'digit_objects' else 10}


def test_an_unknown_study_data_is_refused_by_name():
    with pytest.raises(intra_class.StudyRequestError, match="--data: one of .*'cifar'"):
        intra_class.intra_class_study('cifar')
