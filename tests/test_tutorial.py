"""The 'add a new distillation method' tutorial, run exactly as written (small data)."""

import importlib
import os.path as osp

import pytest
import torch
from conftest import REPO, small_run_cfg

from mlkd.engine import build_runner

TUTORIAL = osp.join(REPO, 'docs', 'tutorials', 'new_method')


@pytest.fixture
def tutorial_importable(monkeypatch):
    """The tutorial's folder importable, as the user's PYTHONPATH makes it (undone after the
    test). In this process: the tests inspect the runner and the loss objects it built."""
    monkeypatch.syspath_prepend(TUTORIAL)


def test_user_loss_outside_the_package_trains_from_its_config(tmp_work_dir, tutorial_importable):
    cfg = small_run_cfg(
        osp.join(TUTORIAL, 'standardized_logit_multidigits.py'),
        tmp_work_dir,
        epochs=1,
        train_samples=64,
        val_samples=32,
    )
    cfg.model.teacher_ckpt = None  # a random teacher: this test checks the plumbing
    cfg.model.allow_random_teacher = True
    runner = build_runner(cfg)
    runner.train()
    loss = runner.model.distill_losses['std_logit']
    assert type(loss).__name__ == 'StandardizedLogitLoss'
    assert runner.message_hub.get_scalar('train/loss_std_logit') is not None
    assert runner.message_hub.get_scalar('val/mAP').current() >= 0


def test_tutorial_loss_matches_a_hand_computation(tutorial_importable):
    from standardized_logit_loss import standardized_logit_mse

    s = torch.tensor([[1.0, 2.0, 3.0]])
    t = torch.tensor([[10.0, 30.0, 20.0]])
    # z-scores (sample std, n-1 = 2): s -> [-1, 0, 1]; t -> [-1, 1, 0]; squared diffs 0, 1, 1.
    expected = torch.tensor(2.0 / 3.0)
    torch.testing.assert_close(standardized_logit_mse(s, t, eps=0.0), expected)
    assert standardized_logit_mse(t, t) == 0


# ------------------------------------------------- the three contracts (docs/architecture.md §3)
CONTRACT_EXAMPLES = {
    'standardized_logit_loss.py': 'standardized_logit_multidigits.py',
    'poly_bce_loss.py': 'poly_bce_multidigits.py',
    'progressive_targets_loss.py': 'progressive_targets_multidigits.py',
}


def test_each_contract_example_is_one_file_under_80_lines():
    for loss_file in CONTRACT_EXAMPLES:
        with open(osp.join(TUTORIAL, loss_file)) as f:
            assert len(f.read().splitlines()) < 80, loss_file


def test_poly_bce_matches_a_hand_computation(tutorial_importable):
    poly = importlib.import_module('poly_bce_loss')
    logits = torch.tensor([[0.0, 2.0, -1.0]])
    gt = torch.tensor([[1.0, 0.0, -1.0]])
    # entry 0: BCE log 2, p_t 0.5 -> + 0.5; entry 1: BCE softplus(2), p_t = σ(−2) -> + σ(2);
    # entry 2 ignored.
    sig2 = 1 / (1 + torch.exp(torch.tensor(-2.0)))
    expected = (
        torch.log(torch.tensor(2.0)) + 0.5 + torch.nn.functional.softplus(torch.tensor(2.0)) + sig2
    )
    torch.testing.assert_close(poly.poly1_bce(logits, gt, epsilon=1.0), expected)
    loss = poly.PolyBCELoss(epsilon=1.0, loss_weight=2.0)
    torch.testing.assert_close(loss(logits, gt, avg_factor=1), 2 * expected)  # a head's call
    torch.testing.assert_close(
        poly.poly1_bce(logits, gt, epsilon=0.0), expected - 0.5 - sig2
    )  # ε = 0: BCE


def test_progressive_targets_follow_the_previous_visit(tutorial_importable):
    module = importlib.import_module('progressive_targets_loss')
    loss = module.ProgressiveTargetLoss(num_samples=4, num_classes=2, alpha=0.5)
    logits, gt, idx = torch.tensor([[1.0, -1.0]]), torch.tensor([[1.0, 0.0]]), torch.tensor([2])
    first = loss(logits, gt, sample_idx=idx, reduction_override='sum')
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    torch.testing.assert_close(first, bce(logits, gt, reduction='sum'))  # nothing seen yet
    assert loss.seen.tolist() == [False, False, True, False]
    second = loss(torch.zeros(1, 2), gt, sample_idx=idx, reduction_override='sum')
    soft = 0.5 * gt + 0.5 * torch.sigmoid(logits)  # previous visit
    torch.testing.assert_close(second, bce(torch.zeros(1, 2), soft, reduction='sum'))


@pytest.mark.parametrize('loss_file', ['poly_bce_loss.py', 'progressive_targets_loss.py'])
def test_contract_example_trains_from_its_config(loss_file, tmp_work_dir, tutorial_importable):
    cfg = small_run_cfg(
        osp.join(TUTORIAL, CONTRACT_EXAMPLES[loss_file]),
        tmp_work_dir,
        epochs=1,
        train_samples=64,
        val_samples=32,
    )
    runner = build_runner(cfg)
    runner.train()
    assert runner.message_hub.get_scalar('val/mAP').current() >= 0
    if loss_file == 'progressive_targets_loss.py':
        state = runner.model.losses['ps_kd']
        assert int(state.seen.sum()) == 64
        assert runner.message_hub.get_scalar('train/loss_ps_kd') is not None
