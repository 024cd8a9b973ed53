"""The tools behind docs/diagnosis.md run against today's package (both had broken on renames)."""

import math
import os.path as osp
import runpy
import sys

import torch
from conftest import REPO, load_tool
from mmengine.config import Config
from mmengine.registry import DefaultScope

LED_CANDIDATES = osp.join(REPO, 'tools', 'analysis_tools', 'led_candidates.py')
L2D_DEMO = osp.join(REPO, 'configs', 'demo', 'l2d.py')


def test_loss_scale_reproduces_the_documented_ratios():
    """The first row of docs/diagnosis.md §2's table (literal weights, B = 64, C = 10)."""
    tool = load_tool('analysis_tools/loss_scale')
    row = tool.ratios(64, 10, 2.3, None)
    documented = {
        '10·MLD': 0.151,
        '100·L_PD (τ²)': 2.9,
        '100·L_PD (no τ²)': 0.181,
        '10·L_NDD': 0.0171,
        '100·CD': 0.799,
        '1000·ID': 5.81,
    }
    assert row.keys() == documented.keys()
    for name, value in documented.items():
        assert f'{row[name]:.3g}' == f'{value:.3g}', (name, row[name])


def test_led_candidates_runs_on_a_teacher_checkpoint(tmp_path, monkeypatch, capsys):
    """``python tools/analysis_tools/led_candidates.py TEACHER --batches 1``: one table row per
    candidate, finite values, the weighted sum consistent with the two printed terms."""
    with DefaultScope.overwrite_default_scope('mlkd'):
        from mlkd.models.builder import build_network

        teacher = build_network(Config.fromfile(L2D_DEMO).model.teacher, 'teacher')
    ckpt = str(tmp_path / 'teacher.pth')
    torch.save({'state_dict': teacher.state_dict()}, ckpt)
    monkeypatch.setattr(sys, 'argv', [LED_CANDIDATES, ckpt, '--config', L2D_DEMO, '--batches', '1'])
    runpy.run_path(LED_CANDIDATES, run_name='__main__')
    rows = [
        line.strip('|').split('|')
        for line in capsys.readouterr().out.splitlines()
        if line.startswith('| ') and not line.startswith('| student')
    ]
    assert [r[0].strip() for r in rows] == [
        'init',
        'constant',
        'constant + 1e-3 noise',
        'teacher projected',
        'teacher projected + noise',
        'teacher shuffled',
    ]
    for row in rows:
        cd, id_, total, grad = (float(v) for v in row[1:])
        assert all(math.isfinite(v) for v in (cd, id_, total, grad))
        assert abs(total - (100 * cd + 1000 * id_)) <= 100 * 0.005 + 1000 * 0.005 + 0.5
