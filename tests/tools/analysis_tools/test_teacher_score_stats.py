"""tools/analysis_tools/teacher_score_stats.py (the 3D paper's Table C.4) as a user runs it, on a
random-weight MultiDigits teacher and the bundled digits, against a direct loop computation."""

from __future__ import annotations

import csv
import math
import os.path as osp

import pytest
import torch
from conftest import assert_png, build_model, config_path, load_tool, run_tool
from mmengine.config import Config
from mmengine.registry import DefaultScope

import mlkd
from mlkd.registry import DATASETS

mlkd.register_all_modules()
TOOL = 'tools/analysis_tools/teacher_score_stats.py'
CONFIG = config_path('multidigits', 'resnet_teacher.py')
NUM_SAMPLES = 24
OPTIONS = [
    f'train_dataloader.dataset.num_samples={NUM_SAMPLES}',
    'test_dataloader.num_workers=0',
    'test_dataloader.persistent_workers=False',
]


@pytest.fixture(scope='module')
def teacher(tmp_path_factory):
    cfg = Config.fromfile(CONFIG)
    torch.manual_seed(3)
    model = build_model(dict(cfg.model, data_preprocessor=cfg.data_preprocessor))
    model.init_weights()
    with torch.no_grad():  # a bias that puts scores on both sides of 0.5
        model.head.fc.bias.copy_(torch.linspace(-2, 2, model.head.fc.bias.numel()))
    path = str(tmp_path_factory.mktemp('teacher') / 'teacher.pth')
    torch.save({'state_dict': model.state_dict(), 'meta': {}}, path)
    return path, model.eval()


def _direct(model) -> dict[str, float]:
    """The training images through the test pipeline, one at a time, and the numbers by loops."""
    cfg = Config.fromfile(CONFIG)
    dataset_cfg = dict(
        cfg.train_dataloader.dataset,
        num_samples=NUM_SAMPLES,
        pipeline=cfg.test_dataloader.dataset.pipeline,
    )
    with DefaultScope.overwrite_default_scope('mlkd'):
        dataset = DATASETS.build(dataset_cfg)
    correct = entries = 0
    positive, negative = [], []
    with torch.no_grad():
        for i in range(len(dataset)):
            data = model.data_preprocessor(
                dict(inputs=[dataset[i]['inputs']], data_samples=[dataset[i]['data_samples']])
            )
            logits = model(data['inputs'], mode='tensor')[0].tolist()
            labels = set(int(c) for c in dataset[i]['data_samples'].gt_label)
            for c, logit in enumerate(logits):
                score = 1 / (1 + math.exp(-logit))
                (positive if c in labels else negative).append(score)
                correct += int((score >= 0.5) == (c in labels))
                entries += 1
    return dict(
        accuracy=correct / entries,
        positive_score=sum(positive) / len(positive),
        negative_score=sum(negative) / len(negative),
        num_positive=len(positive),
    )


def test_tool_matches_a_loop_computation_and_writes_table_csv_png(teacher, tmp_path):
    path, model = teacher
    out_dir = str(tmp_path / 'out')
    result = run_tool(
        TOOL,
        CONFIG,
        path,
        '--out-dir',
        out_dir,
        '--device',
        'cpu',
        '--batch-size',
        '10',
        '--cfg-options',
        *OPTIONS,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    with open(osp.join(out_dir, 'teacher_score_stats.csv'), encoding='utf-8') as file:
        row = next(csv.DictReader(file))
    expected = _direct(model)
    assert int(row['num_images']) == NUM_SAMPLES
    assert int(row['num_positive']) == expected['num_positive']
    for key in ('accuracy', 'positive_score', 'negative_score'):
        assert float(row[key]) == pytest.approx(expected[key], rel=1e-5), key
    # The bias makes the teacher neither all-right nor all-wrong: the check is not degenerate.
    assert 0.1 < expected['accuracy'] < 0.9
    with open(osp.join(out_dir, 'teacher_score_stats.md'), encoding='utf-8') as file:
        table = file.read()
    assert f'| Accuracy (%) | {100 * expected["accuracy"]:.2f} |' in table
    assert f'{NUM_SAMPLES} images' in table
    assert_png(osp.join(out_dir, 'teacher_score_stats.png'))
    # Nothing that exists is overwritten without --overwrite (checked before anything runs).
    tool = load_tool('analysis_tools/teacher_score_stats')
    with pytest.raises(FileExistsError, match='teacher_score_stats.md.* exists; pass --overwrite'):
        tool.main([CONFIG, path, '--out-dir', out_dir])
