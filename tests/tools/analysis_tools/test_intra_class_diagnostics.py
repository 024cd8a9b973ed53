"""tools/analysis_tools/intra_class_diagnostics.py as a user runs it, on two random-weight teachers
of a tiny single-label MultiDigits classifier, against a direct loop computation.

The teachers' config wraps the classifier in a ``ClassifierWithLosses`` (as the intra-class
teacher does); the λ = 0 teacher is a plain classifier checkpoint, the other a
``ClassifierWithLosses`` checkpoint with losses' state beside the network."""

from __future__ import annotations

import csv
import math
import os.path as osp

import pytest
import torch
from conftest import assert_png, build_model, config_path, load_tool, run_tool
from helpers import loop_class_distance_statistics
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mlkd
from mlkd.engine import MLKDRunner

mlkd.register_all_modules()
TOOL = 'tools/analysis_tools/intra_class_diagnostics.py'
CONFIG = config_path('multidigits', 'resnet_student_single_label.py')
NUM_SAMPLES = 30
DATA_OPTIONS = [
    f'test_dataloader.dataset.num_samples={NUM_SAMPLES}',
    'test_dataloader.num_workers=0',
    'test_dataloader.persistent_workers=False',
]


TEACHER_CONFIG = """_base_ = ['mlkd::multidigits/resnet_student_single_label.py']
model = dict(_delete_=True, type='ClassifierWithLosses', classifier=_base_.model)
"""


def _model(seed: int):
    cfg = Config.fromfile(CONFIG)
    torch.manual_seed(seed)
    model = build_model(dict(cfg.model, data_preprocessor=cfg.data_preprocessor))
    model.init_weights()
    return model.eval()


def _direct(model) -> dict[str, float]:
    """Embeddings through backbone -> neck, then every quantity by loops over samples."""
    cfg = Config.fromfile(CONFIG)
    cfg.test_dataloader.dataset.num_samples = NUM_SAMPLES
    cfg.test_dataloader.update(num_workers=0, persistent_workers=False)
    with DefaultScope.overwrite_default_scope('mlkd'):
        loader = MLKDRunner.build_dataloader(cfg.test_dataloader)
    embeddings, logits, labels = [], [], []
    with torch.no_grad():
        for batch in loader:
            data = model.data_preprocessor(batch, training=False)
            pooled = model.neck(model.backbone(data['inputs']))[-1]
            embeddings.append(pooled)
            logits.append(model.head.fc(pooled))
            labels += [int(s.gt_label) for s in data['data_samples']]
    embeddings, logits = torch.cat(embeddings), torch.cat(logits).double()
    stats = loop_class_distance_statistics(embeddings, torch.tensor(labels))
    entropies = []
    for row in logits.tolist():
        top = max(row)
        weights = [math.exp(v - top) for v in row]
        probs = [w / sum(weights) for w in weights]
        entropies.append(-sum(p * math.log(p) for p in probs if p > 0))
    stats['entropy'] = sum(entropies) / len(entropies)
    stats['accuracy'] = (
        100
        * sum(
            int(max(range(len(r)), key=r.__getitem__) == y) for r, y in zip(logits.tolist(), labels)
        )
        / len(labels)
    )
    stats['num_samples'] = len(labels)
    return stats


@pytest.fixture(scope='module')
def teachers(tmp_path_factory):
    folder = tmp_path_factory.mktemp('teachers')
    found = {}
    for lam, seed in ((0.0, 0), (0.02, 1)):
        model = _model(seed)
        path = str(folder / f'teacher_{seed}.pth')
        state = model.state_dict()
        if lam > 0:  # saved by a ClassifierWithLosses: the network under `classifier.`, plus state
            state = {f'classifier.{k}': v for k, v in state.items()}
            state['loss_router.losses.intra.cache'] = torch.zeros(10, 4, 128)
        torch.save({'state_dict': state, 'meta': {}}, path)
        found[lam] = (path, model)
    config = folder / 'teacher_with_losses.py'
    config.write_text(TEACHER_CONFIG)
    return found, str(config)


def test_tool_matches_a_loop_computation_and_writes_table_csv_png(teachers, tmp_path):
    teachers, config = teachers
    out_dir = str(tmp_path / 'out')
    specs = [f'{lam:g}={path}' for lam, (path, _) in teachers.items()]
    # λ = 0.02 gets a second checkpoint (the λ = 0 network standing in for another seed).
    second = f'0.02={teachers[0.0][0]}'
    result = run_tool(
        TOOL,
        config,
        '--teachers',
        *reversed(specs),
        second,
        '--out-dir',
        out_dir,
        '--device',
        'cpu',
        '--chunk-size',
        '7',
        '--batch-size',
        '8',
        '--cfg-options',
        *DATA_OPTIONS,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    with open(osp.join(out_dir, 'intra_class_diagnostics.csv'), encoding='utf-8') as file:
        rows = list(csv.DictReader(file))
    assert [float(row['lambda']) for row in rows] == [0.0, 0.02, 0.02]  # sorted by λ
    for row, (lam, (path, model)) in zip(rows, sorted(teachers.items())):
        expected = _direct(model)
        assert row['checkpoint'] == path and int(row['num_samples']) == NUM_SAMPLES
        for key in (
            'intra_distance',
            'inter_distance',
            'd_intra',
            'd_inter',
            'entropy',
            'accuracy',
        ):
            assert float(row[key]) == pytest.approx(expected[key], rel=1e-5), (lam, key)
        assert float(row['d_ratio']) == pytest.approx(
            expected['d_intra'] / expected['d_inter'], rel=1e-5
        )
        assert float(row['distance_ratio']) == pytest.approx(
            expected['intra_distance'] / expected['inter_distance'], rel=1e-5
        )
    # Two different random teachers give different numbers (the table is not one row twice).
    assert rows[0]['d_intra'] != rows[1]['d_intra']
    with open(osp.join(out_dir, 'intra_class_diagnostics.md'), encoding='utf-8') as file:
        table = file.read()
    assert '| λ | top-1 (%) | soft-label entropy |' in table and '| 0.02 |' in table
    # The per-λ summary: λ = 0.02 over its two checkpoints, mean ± sample std.
    entropies = [_direct(teachers[0.02][1])['entropy'], float(rows[0]['entropy'])]
    assert float(rows[2]['entropy']) == pytest.approx(entropies[1], rel=1e-6)
    mean, std = sum(entropies) / 2, abs(entropies[0] - entropies[1]) / math.sqrt(2)
    summary = table[table.index('Per λ, mean ± sample std') :]
    assert '| 0 | 1 |' in summary
    assert '| 0.02 | 2 | ' in summary and f'{mean:.4f} ± {std:.4f}' in summary
    assert_png(osp.join(out_dir, 'intra_class_diagnostics.png'))
    # Nothing that exists is overwritten without --overwrite (checked before anything runs).
    tool = load_tool('analysis_tools/intra_class_diagnostics')
    with pytest.raises(
        FileExistsError, match='intra_class_diagnostics.md.* exists; pass --overwrite'
    ):
        tool.main([config, '--teachers', specs[0], '--out-dir', out_dir])


def test_teacher_specs_are_parsed_and_checked():
    tool = load_tool('analysis_tools/intra_class_diagnostics')
    assert tool.parse_teachers(['0.03=c', '0=a', '0.01=b']) == [
        (0.0, 'a'),
        (0.01, 'b'),
        (0.03, 'c'),
    ]
    # Several checkpoints per λ (other seeds), in the order given.
    assert tool.parse_teachers(['0.01=b', '0=a', '1e-2=c']) == [
        (0.0, 'a'),
        (0.01, 'b'),
        (0.01, 'c'),
    ]
    for bad, match in (
        (['a.pth'], 'not LAMBDA=CHECKPOINT'),
        (['x=a.pth'], 'not LAMBDA'),
        (['0.01='], 'not LAMBDA'),
        (['-0.1=a'], 'must be >= 0'),
        (['0.01=a', '1e-2=a'], "'a' given twice for λ=1e-2"),
    ):
        with pytest.raises(ValueError, match=match):
            tool.parse_teachers(bad)


def test_checkpoints_of_one_lambda_are_summarised_together():
    tool = load_tool('analysis_tools/intra_class_diagnostics')
    keys = [key for key, _, _ in tool.QUANTITIES]
    rows = [
        dict({k: 1.0 for k in keys}, **{'lambda': 0.0}),
        dict({k: 2.0 for k in keys}, **{'lambda': 0.02}),
        dict({k: 4.0 for k in keys}, entropy=0.5, **{'lambda': 0.02}),
    ]
    summary = tool.by_lambda(rows)
    assert [row['lambda'] for row in summary] == [0.0, 0.02]
    assert [row['checkpoints'] for row in summary] == [1, 2]
    assert summary[1]['d_ratio'] == [2.0, 4.0] and summary[1]['entropy'] == [2.0, 0.5]
    assert summary[0]['accuracy'] == [1.0]


def test_multi_label_data_is_refused():
    tool = load_tool('analysis_tools/intra_class_diagnostics')
    from mmpretrain.structures import DataSample

    samples = [DataSample().set_gt_label([1]), DataSample().set_gt_label([0, 2])]
    with pytest.raises(ValueError, match=r'single-label data .* \[1, 2\] labels'):
        tool.single_labels(samples, 'the dataset')
