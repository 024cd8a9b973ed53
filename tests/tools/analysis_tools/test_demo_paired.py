"""demo_paired.py: paired differences with the student of the same seed and their t-intervals."""

import json
import sys

import pytest
from conftest import load_tool

from mlkd.utils.output_policy import OutputExistsError

demo_paired = load_tool('analysis_tools/demo_paired')
main, paired_rows = demo_paired.main, demo_paired.paired_rows


def runs(scores: dict[int, float]) -> list[dict]:
    return [dict(seed=s, test={'mAP': v}) for s, v in scores.items()]


def test_paired_difference_and_its_t_interval_match_a_hand_computation():
    student = {0: 80.0, 1: 70.0, 2: 75.0, 3: 90.0, 4: 60.0}
    # Differences 1..5 (seed order scrambled in the file): mean 3, sample std sqrt(2.5).
    kd = {4: 65.0, 0: 81.0, 2: 78.0, 1: 72.0, 3: 94.0}
    rows = paired_rows(dict(teacher=runs({0: 99.0}), student=runs(student), KD=runs(kd)))
    assert [row['stage'] for row in rows] == ['KD']
    row = rows[0]
    assert row['seeds'] == [0, 1, 2, 3, 4] and row['diff_mean'] == pytest.approx(3.0)
    half = 2.7764451051977987 * 2.5**0.5 / 5**0.5  # t_{0.975, 4} from a table
    assert row['diff_low'] == pytest.approx(3.0 - half) and row['diff_high'] == pytest.approx(
        3.0 + half
    )
    assert row['mean'] == pytest.approx(78.0)


def test_only_shared_seeds_are_paired_and_a_missing_student_is_refused():
    rows = paired_rows(dict(student=runs({0: 80.0, 1: 70.0}), MLD=runs({1: 71.0, 7: 99.0})))
    assert rows[0]['seeds'] == [1] and rows[0]['diff_mean'] == pytest.approx(1.0)
    with pytest.raises(ValueError, match='no plain student'):
        paired_rows(dict(MLD=runs({0: 1.0})))


def test_writes_table_and_png(tmp_path, monkeypatch, capsys):
    path = tmp_path / 'results.json'
    path.write_text(
        json.dumps(
            dict(results=dict(student=runs({0: 80.0, 1: 70.0}), KD=runs({0: 82.0, 1: 71.0})))
        )
    )
    out = str(tmp_path / 'cmp')
    monkeypatch.setattr(sys, 'argv', ['demo_paired.py', str(path), '--out', out])
    assert main() == 0
    assert '| KD | 0,1 | 76.50 ± 7.78 | +1.50 |' in open(out + '.md').read()
    assert open(out + '.png', 'rb').read(8) == b'\x89PNG\r\n\x1a\n'
    with pytest.raises(OutputExistsError, match='--overwrite'):  # no silent overwrite
        main()


def test_val_split_and_several_baselines(tmp_path, monkeypatch):
    path = tmp_path / 'results.json'
    both = [dict(seed=s, test={'mAP': 90.0}, val={'mAP': v}) for s, v in ((0, 83.0), (1, 84.0))]
    one = [dict(seed=s, test={'mAP': 50.0}, val={'mAP': v}) for s, v in ((0, 80.0), (1, 83.0))]
    two = [dict(seed=s, test={'mAP': 50.0}, val={'mAP': v}) for s, v in ((0, 82.0), (1, 82.0))]
    path.write_text(json.dumps(dict(results=dict(one=one, two=two, both=both))))
    out = str(tmp_path / 'cmp')
    argv = [str(path), '--out', out, '--split', 'val', '--baselines', 'one', 'two']
    assert main(argv + ['--stages', 'both']) == 0
    text = open(out + '.md').read()
    assert '| val mAP (mean ± std) | paired with |' in text
    assert '| both | 0,1 | 83.50 ± 0.71 | one | +2.00 |' in text  # val: 3 and 1
    assert '| both | 0,1 | 83.50 ± 0.71 | two | +1.50 |' in text  # val: 1 and 2
