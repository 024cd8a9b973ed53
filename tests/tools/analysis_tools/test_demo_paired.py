"""demo_paired.py as a user runs it: tables, PNG and claims (the arithmetic: tests/apis/test_paired.py)."""

import json
import sys

import pytest
from conftest import load_tool

from mlkd.utils.output_policy import OutputExistsError

demo_paired = load_tool('analysis_tools/demo_paired')
main = demo_paired.main


def runs(scores: dict[int, float]) -> list[dict]:
    return [dict(seed=s, test={'mAP': v}) for s, v in scores.items()]


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


def test_claims_and_a_fidelity_metric(tmp_path, capsys):
    path = tmp_path / 'results.json'
    fid = {'test': {'fidelity/mAP_vs_teacher': 0.0}}
    results = dict(
        teacher=[dict(seed=0, test={'mAP': 90.0}, fidelity=fid)],
        KD=[dict(seed=s, test={'mAP': v}, fidelity=fid) for s, v in ((0, 92.0), (1, 93.0))],
    )
    path.write_text(json.dumps(dict(results=results)))
    out = str(tmp_path / 'claims')
    assert main([str(path), '--out', out, '--claims', 'KD:teacher']) == 0
    assert (
        '| KD | 0,1 | 92.50 ± 0.71 | +2.50 | [-3.85, +8.85] | not held |'
        in open(out + '.md').read()
    )
    with pytest.raises(SystemExit):
        main([str(path), '--out', out + '2', '--claims', 'KD-teacher'])
    assert 'not of the form A:B' in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(path), '--out', out + '3', '--claims', 'KD:teacher', '--metric', 'fidelity/kl'])
    assert "no 'fidelity/kl' on test" in capsys.readouterr().err
