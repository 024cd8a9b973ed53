"""``tools/analysis_tools/expected_negative_stats.py`` on the shipped EN config, as a user runs it."""

from __future__ import annotations

import pytest
import torch
from conftest import config_path, run_tool
from mmengine.config import Config

from mlkd.apis.expected_negatives import QUALITY_KEYS, expected_negative_report, label_matrices
from mlkd.registry import DATASETS

EN_CONFIG = config_path('ranking', 'single_positive', 'en.py')
NUM_SAMPLES = 40
SMALL_KEYS = ('train_dataloader.dataset.num_samples', 'model.losses.en.num_samples')
SMALL = [f'{key}={NUM_SAMPLES}' for key in SMALL_KEYS]


def planted_checkpoint(path, scores: torch.Tensor, seen: torch.Tensor) -> str:
    torch.save({'state_dict': {'losses.en.scores': scores, 'losses.en.seen': seen}}, path)
    return str(path)


def test_tool_on_the_shipped_en_config_equals_a_loop(tmp_path):
    cfg = Config.fromfile(EN_CONFIG)
    dataset_cfg = dict(cfg.train_dataloader.dataset, num_samples=NUM_SAMPLES, pipeline=[])
    observed, complete, _ = label_matrices(DATASETS.build(dataset_cfg))
    generator = torch.Generator().manual_seed(0)
    scores = torch.rand(NUM_SAMPLES, observed.shape[1], generator=generator)
    scores = scores + 0.5 * complete  # a state that tends to rank the positives first
    seen = torch.ones(NUM_SAMPLES, dtype=torch.bool)
    seen[:5] = False
    checkpoint = planted_checkpoint(tmp_path / 'epoch_1.pth', scores, seen)
    out = tmp_path / 'en.md'
    result = run_tool(
        'tools/analysis_tools/expected_negative_stats.py',
        EN_CONFIG,
        checkpoint,
        '--out',
        str(out),
        '--cfg-options',
        *SMALL,
    )
    assert result.returncode == 0, result.stderr
    row = next(line for line in out.read_text().splitlines() if '(en)' in line)
    cells = [cell.strip() for cell in row.strip('|').split('|')][1:]
    measured = [float(cell) for cell in cells]

    # The loop, from the EN rule: of each seen image's non-annotated classes, the round(2.79) = 3
    # with the highest running average are left out; every other one is a negative.
    left = hits = hidden_total = negatives = noisy = unobserved_total = 0
    for n in range(5, NUM_SAMPLES):
        unobserved = [c for c in range(observed.shape[1]) if not observed[n, c]]
        ranked = sorted(unobserved, key=lambda c: -float(scores[n, c]))
        left_out, negative = ranked[:3], ranked[3:]
        hidden = [c for c in unobserved if complete[n, c]]
        left += len(left_out)
        hits += sum(bool(complete[n, c]) for c in left_out)
        hidden_total += len(hidden)
        negatives += len(negative)
        noisy += sum(bool(complete[n, c]) for c in negative)
        unobserved_total += len(unobserved)
    seen_images = NUM_SAMPLES - 5
    expected = [
        seen_images / NUM_SAMPLES,
        left / seen_images,
        hits / left,
        hits / hidden_total,
        noisy / negatives,
        hidden_total / unobserved_total,
    ]
    assert measured == pytest.approx(expected, abs=5e-4)  # the table rounds to 3 decimals
    assert hits > 0 and noisy > 0  # the planted state makes neither count trivial

    # a config that reads 0 targets as annotated negatives: the same sets (the data have none)
    cfg.merge_from_dict({'model.losses.en.observed_negatives': True})
    cfg.merge_from_dict(dict.fromkeys(SMALL_KEYS, NUM_SAMPLES))
    values = expected_negative_report(cfg, [checkpoint])[checkpoint]['en']
    assert [values[key] for key in QUALITY_KEYS] == pytest.approx(expected)


def test_a_config_without_en_and_a_checkpoint_without_state_are_named(tmp_path):
    checkpoint = planted_checkpoint(
        tmp_path / 'epoch_1.pth', torch.zeros(NUM_SAMPLES, 40), torch.ones(NUM_SAMPLES).bool()
    )
    an_config = config_path('ranking', 'single_positive', 'an.py')
    result = run_tool(
        'tools/analysis_tools/expected_negative_stats.py',
        an_config,
        checkpoint,
        '--cfg-options',
        f'train_dataloader.dataset.num_samples={NUM_SAMPLES}',
    )
    assert result.returncode != 0
    assert 'an.py' in result.stderr and 'no ExpectedNegativeLoss' in result.stderr

    torch.save({'state_dict': {}}, tmp_path / 'empty.pth')
    result = run_tool(
        'tools/analysis_tools/expected_negative_stats.py',
        EN_CONFIG,
        str(tmp_path / 'empty.pth'),
        '--cfg-options',
        *SMALL,
    )
    assert result.returncode != 0
    assert 'empty.pth' in result.stderr and 'losses.en.scores' in result.stderr
