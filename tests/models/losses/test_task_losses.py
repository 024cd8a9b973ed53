"""Multi-label task losses: ASL, the two Focal forms, Two-way, Hill, SPLC, focal margin, and the
Two-way paper's baselines WARP, RML (mlkd's reconstruction) and the multi-label softmax.

Each module is checked against a float64 loop transcribing its paper's formula
(``tests/loss_references.py``) in value and gradient, on random batches and on the edge
cases of ``docs/methods.md`` §8 (±50 logits, batch size 1, classes and samples without positives
or negatives, all-ignored rows, a batch without positives); as the loss of an mmpretrain
``MultiLabelLinearClsHead`` (``avg_factor`` ignored); on half-precision logits; and, for Two-way,
under 2-process CPU DDP.
"""

import os
import socket
from functools import partial

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from conftest import build_model
from loss_references import (
    asymmetric_reference,
    hill_reference,
    multilabel_softmax_reference,
    robust_ramp_reference,
    sigmoid_focal_reference,
    splc_reference,
    two_way_reference,
    warp_reference,
)
from mmengine.logging import MessageHub
from torch import nn

from mlkd.models.losses import (
    AsymmetricFocalLoss,
    AsymmetricMultiLabelLoss,
    FocalMarginLoss,
    HillLoss,
    MultiLabelSoftmaxLoss,
    RobustMultiLabelLoss,
    SigmoidFocalLoss,
    SPLCLoss,
    TwoWayMultiLabelLoss,
    WARPLoss,
    asymmetric_loss,
    splc_loss,
    two_way_loss,
)
from mlkd.models.losses.task.focal import focal_bce

# name -> (module, float64 loop reference). SPLC is checked without a runner (no epoch: no
# correction) here and with an epoch below.
CASES = {
    'asl_paper': (AsymmetricMultiLabelLoss(), asymmetric_reference),
    'asl_class_defaults_no_detach': (
        AsymmetricMultiLabelLoss(gamma_pos=1, detach_focal_weight=False),
        partial(asymmetric_reference, gamma_pos=1, detach_focal_weight=False),
    ),
    'asl_no_clip_mean': (
        AsymmetricMultiLabelLoss(gamma_pos=1, gamma_neg=2, clip=0, reduction='mean'),
        None,
    ),  # reference below: the sum divided by the number of valid entries
    'asl_focal': (
        AsymmetricFocalLoss(),
        partial(asymmetric_reference, gamma_pos=2, gamma_neg=2, clip=0),
    ),
    'sigmoid_focal': (SigmoidFocalLoss(), sigmoid_focal_reference),
    'sigmoid_focal_no_alpha': (
        SigmoidFocalLoss(alpha=-1, gamma=0.5),
        partial(sigmoid_focal_reference, alpha=-1, gamma=0.5),
    ),
    'hill': (HillLoss(), hill_reference),
    'focal_margin': (FocalMarginLoss(), partial(splc_reference, epoch=None)),
    'splc_no_runner': (SPLCLoss(), partial(splc_reference, epoch=None)),
    'two_way': (TwoWayMultiLabelLoss(), two_way_reference),
    'two_way_classwise': (
        TwoWayMultiLabelLoss(samplewise=False),
        partial(two_way_reference, samplewise=False),
    ),
    'two_way_samplewise_t1': (
        TwoWayMultiLabelLoss(classwise=False, pos_temperature=1.0, neg_temperature=2.0),
        partial(two_way_reference, classwise=False, pos_temperature=1.0, neg_temperature=2.0),
    ),
    'warp': (WARPLoss(), warp_reference),
    'warp_margin_mean': (
        WARPLoss(margin=0.5, reduction='mean'),
        partial(warp_reference, margin=0.5, reduction='mean'),
    ),
    'warp_batchmean': (
        WARPLoss(reduction='batchmean'),
        partial(warp_reference, reduction='batchmean'),
    ),
    'rml': (RobustMultiLabelLoss(), robust_ramp_reference),
    'rml_switches_mean': (
        RobustMultiLabelLoss(
            ramp_start=-0.5, classwise_weight=0.3, pair_normalise=True, reduction='mean'
        ),
        partial(
            robust_ramp_reference,
            ramp_start=-0.5,
            classwise_weight=0.3,
            pair_normalise=True,
            reduction='mean',
        ),
    ),
    'rml_ranking_only_pairs_mean': (
        RobustMultiLabelLoss(classwise_weight=0.0, ramp_start=0.0, reduction='mean'),
        partial(robust_ramp_reference, classwise_weight=0.0, ramp_start=0.0, reduction='mean'),
    ),
    'rml_batchmean': (
        RobustMultiLabelLoss(pair_normalise=True, reduction='batchmean'),
        partial(robust_ramp_reference, pair_normalise=True, reduction='batchmean'),
    ),
    'softmax': (MultiLabelSoftmaxLoss(), multilabel_softmax_reference),
    'softmax_sum': (
        MultiLabelSoftmaxLoss(reduction='sum'),
        partial(multilabel_softmax_reference, reduction='sum'),
    ),
}


def _reference(name):
    module, reference = CASES[name]
    if reference is not None:
        return reference
    full = partial(asymmetric_reference, gamma_pos=1, gamma_neg=2, clip=0)
    return lambda z, y: full(z, y) / max(int((y >= 0).sum()), 1)


def _random_problem(batch=6, classes=5, seed=0, scale=3.0):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(batch, classes, generator=g) * scale
    gt = (torch.rand(batch, classes, generator=g) < 0.4).float()
    gt[torch.rand(batch, classes, generator=g) < 0.15] = -1
    return logits, gt


def _edge_problem():
    """Rows: normal; all ignored; no positive; no negative; normal. Column 5 has no positive,
    column 3 no negative. Some logits at ±50, placed against their labels and with them."""
    gt = torch.tensor(
        [
            [1.0, 0, 0, 1, -1, 0],
            [-1, -1, -1, -1, -1, -1],
            [0, 0, 0, -1, 0, 0],
            [1, 1, 1, 1, 1, -1],
            [0, 1, 0, 1, 0, 0],
        ]
    )
    logits, _ = _random_problem(5, 6, seed=3)
    logits[0, 0], logits[0, 1] = -50.0, 50.0  # wrong and saturated
    logits[3, 2], logits[4, 0] = 50.0, -50.0  # right and saturated
    logits[2, 4], logits[4, 3] = 50.0, -50.0
    return logits, gt


PROBLEMS = {
    'random': _random_problem(),
    'random_wide': _random_problem(9, 13, seed=1, scale=5.0),
    'edges': _edge_problem(),
    'batch_of_one': _random_problem(1, 7, seed=2),
    'batch_of_one_all_ignored_but_one': (
        torch.tensor([[2.0, -1.0, 0.5]]),
        torch.tensor([[-1.0, 1.0, -1.0]]),
    ),
}


def _value_and_grad(fn, logits, gt, dtype=torch.float32):
    z = logits.to(dtype).clone().requires_grad_()
    out = fn(z, gt.to(dtype))
    out.backward()
    return out.detach(), z.grad


@pytest.mark.parametrize('problem', sorted(PROBLEMS))
@pytest.mark.parametrize('name', sorted(CASES))
def test_loss_and_gradient_equal_the_formula_loop(name, problem):
    module = CASES[name][0]
    logits, gt = PROBLEMS[problem]
    value, grad = _value_and_grad(lambda z, y: module(z, y, avg_factor=z.shape[0]), logits, gt)
    ref_value, ref_grad = _value_and_grad(_reference(name), logits, gt, torch.float64)
    assert value.dtype == torch.float32 and torch.isfinite(grad).all()
    torch.testing.assert_close(value.double(), ref_value, rtol=1e-5, atol=1e-6)
    # fp32 against float64: σ's backward p·(1 − p) loses digits at |z| ≈ 10 (relative 1e-3).
    torch.testing.assert_close(grad.double(), ref_grad, rtol=1e-3, atol=1e-5)
    if (gt < 0).any():
        assert grad[gt < 0].abs().max() == 0  # ignored entries: no gradient


@pytest.mark.parametrize('name', sorted(CASES))
def test_a_batch_without_valid_entries_gives_zero_connected_to_the_graph(name):
    module = CASES[name][0]
    for gt in (torch.full((3, 4), -1.0), torch.zeros(3, 4)):  # all ignored; no positive
        z = torch.randn(3, 4, requires_grad=True)
        out = module(z, gt)
        out.backward()
        ref = _reference(name)(z.detach(), gt)
        torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-6)
        assert out.requires_grad and torch.isfinite(z.grad).all()
        if (gt < 0).all():
            assert out.item() == 0 and z.grad.abs().max() == 0


@pytest.mark.parametrize('name', sorted(CASES))
def test_half_precision_logits_are_evaluated_in_fp32(name):
    module = CASES[name][0]
    logits, gt = PROBLEMS['edges']
    half = logits.half()
    out = module(half, gt.half())
    assert out.dtype == torch.float32
    torch.testing.assert_close(out, module(half.float(), gt))
    with torch.autocast('cpu', dtype=torch.bfloat16):
        assert module(logits, gt).dtype == torch.float32


@pytest.mark.parametrize('name', sorted(CASES))
def test_as_the_loss_of_an_mmpretrain_head(name):
    """``MultiLabelClsHead._get_loss`` passes ``avg_factor=B``; every task loss ignores it, so the
    head's loss is the module's own reduction of the head's logits (−1 targets skipped)."""
    from mmpretrain.structures import DataSample

    module = CASES[name][0]
    cfg = dict(type=type(module).__name__, **_init_args(module))
    head = build_model(dict(type='MultiLabelLinearClsHead', num_classes=5, in_channels=4, loss=cfg))
    assert type(head.loss_module) is type(module)
    feats = torch.randn(6, 4, generator=torch.Generator().manual_seed(5))
    _, gt = _random_problem(6, 5, seed=6)
    samples = [DataSample().set_gt_score(row) for row in gt]
    out = head.loss((feats,), samples)['loss']
    ref = _reference(name)(head((feats,)).detach(), gt)
    torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-6)


def _init_args(module):
    """The constructor arguments of a CASES module (from its attributes)."""
    import inspect

    names = inspect.signature(type(module).__init__).parameters
    args = {
        n: getattr(module, n) for n in names if n not in ('self', 'kwargs') and hasattr(module, n)
    }
    if isinstance(module, AsymmetricFocalLoss):
        args = {'gamma': module.gamma_pos, 'clip': module.clip}
    return args


def test_bad_input_is_refused_with_a_clear_error():
    z = torch.randn(3, 4)
    with pytest.raises(ValueError, match=r'logits \(3, 4\) and gt \(3, 5\)'):
        AsymmetricMultiLabelLoss()(z, torch.zeros(3, 5))
    # Target values are validated once per batch by the data preprocessor, not per loss call:
    # tests/utils/test_target_validation.py.
    with pytest.raises(ValueError, match='reduction'):
        TwoWayMultiLabelLoss(reduction='sum')
    with pytest.raises(ValueError, match='pos_temperature'):
        TwoWayMultiLabelLoss(pos_temperature=0)
    with pytest.raises(ValueError, match='both False'):
        TwoWayMultiLabelLoss(classwise=False, samplewise=False)
    with pytest.raises(ValueError, match='clip'):
        AsymmetricMultiLabelLoss(clip=1.0)
    with pytest.raises(ValueError, match='threshold'):
        SPLCLoss(threshold=1.5)


@pytest.mark.parametrize(
    'loss_type, setting',
    [
        (SigmoidFocalLoss, 'gamma'),
        (HillLoss, 'gamma'),
        (FocalMarginLoss, 'gamma'),
        (AsymmetricMultiLabelLoss, 'gamma_pos'),
        (AsymmetricMultiLabelLoss, 'gamma_neg'),
        (AsymmetricMultiLabelLoss, 'clip'),
        (RobustMultiLabelLoss, 'classwise_weight'),
    ],
)
@pytest.mark.parametrize('value', [-0.5, float('nan')])
def test_negative_setting_is_refused_naming_loss_and_setting(loss_type, setting, value):
    with pytest.raises(ValueError, match=rf'^{loss_type.__name__}: {setting} must be >= 0, got'):
        loss_type(**{setting: value})


# ---------------------------------------------------------------------------------------------
# ASL and Focal.
def test_asl_closed_forms():
    z, gt = _random_problem(4, 6, seed=7)
    valid = gt >= 0
    bce = torch.nn.functional.binary_cross_entropy_with_logits(z[valid], gt[valid], reduction='sum')
    # γ± = 0, m = 0 is summed BCE (methods.md §8); without the ε clamp exactly so.
    torch.testing.assert_close(asymmetric_loss(z, gt, 0, 0, 0, clamp_eps=None), bce)
    # Negatives with p ≤ m have zero loss and zero gradient.
    x = torch.tensor([[-3.0, -2.0, 3.0]], requires_grad=True)  # σ = 0.047, 0.119, 0.953
    y = torch.zeros(1, 3)
    out = asymmetric_loss(x, y, 0, 4, 0.05, reduction='none')
    out.sum().backward()
    assert out[0, 0] == 0 and x.grad[0, 0] == 0 and out[0, 1] > 0 and x.grad[0, 1] > 0


def test_asl_detach_switch_changes_only_the_gradient():
    z, gt = _random_problem(5, 4, seed=8)
    kept, kept_grad = _value_and_grad(
        lambda x, y: asymmetric_loss(x, y, 1, 4, 0.05, detach_focal_weight=False), z, gt
    )
    cut, cut_grad = _value_and_grad(
        lambda x, y: asymmetric_loss(x, y, 1, 4, 0.05, detach_focal_weight=True), z, gt
    )
    torch.testing.assert_close(kept, cut)
    assert not torch.allclose(kept_grad, cut_grad)


def _official_asl_formula(x, y, gamma_pos, gamma_neg, clip, eps=1e-8, detach=False):
    """The official ``AsymmetricLoss.forward`` re-derived from its formula: probabilities by
    ``sigmoid`` and ``1 − sigmoid``, ``log`` of the ε-clamped probability, the focal weight as
    ``pow(1 − p_t, γ_t)``, all in the input's dtype."""
    p = torch.sigmoid(x)
    not_p = 1 - p
    if clip > 0:
        not_p = (not_p + clip).clamp(max=1)
    loss = y * torch.log(p.clamp(min=eps)) + (1 - y) * torch.log(not_p.clamp(min=eps))
    with torch.set_grad_enabled(torch.is_grad_enabled() and not detach):
        p_t = p * y + not_p * (1 - y)
        weight = torch.pow(1 - p_t, gamma_pos * y + gamma_neg * (1 - y))
    return -(loss * weight).sum()


def test_asl_is_finite_where_the_official_formula_is_not():
    # 1. fp32, focal weight not detached, fractional γ+: a confidently right positive (z = 20,
    #    σ rounds to 1) back-propagates γ·0^{γ−1} = inf through the weight -> NaN gradient.
    x = torch.tensor([[20.0, 0.3, -2.0]])
    y = torch.tensor([[1.0, 1.0, 0.0]])
    official, official_grad = _value_and_grad(
        lambda z, t: _official_asl_formula(z, t, 0.5, 4, 0.05), x, y
    )
    assert torch.isfinite(official) and torch.isnan(official_grad).any()
    module = AsymmetricMultiLabelLoss(gamma_pos=0.5, detach_focal_weight=False)
    ours, ours_grad = _value_and_grad(module, x, y)
    ref, ref_grad = _value_and_grad(
        partial(asymmetric_reference, gamma_pos=0.5, detach_focal_weight=False), x, y, torch.float64
    )
    assert torch.isfinite(ours_grad).all()
    torch.testing.assert_close(ours.double(), ref)
    torch.testing.assert_close(ours_grad[:, 1:].double(), ref_grad[:, 1:])  # away from z = 20
    assert abs(ours_grad[0, 0]) < 1e-6  # true value ≈ 0
    # The same for negatives without clip (the Focal form) at z = −20.
    official, official_grad = _value_and_grad(
        lambda z, t: _official_asl_formula(z, t, 0, 0.5, 0), -x, 1 - y
    )
    assert torch.isnan(official_grad).any()
    _, ours_grad = _value_and_grad(
        AsymmetricMultiLabelLoss(gamma_neg=0.5, clip=0, detach_focal_weight=False), -x, 1 - y
    )
    assert torch.isfinite(ours_grad).all()
    # 2. Half-precision logits (AMP without a cast), the paper's setting: ε = 1e-8 rounds to 0 in
    #    float16 and σ(−20) underflows, so log 0 = −inf and 0·(−inf) = NaN.
    logits, gt = PROBLEMS['random']
    logits = logits.clone()
    logits[0, :] = -20.0
    official = _official_asl_formula(logits.half(), gt.clamp(min=0).half(), 0, 4, 0.05, detach=True)
    assert not torch.isfinite(official)
    ours = AsymmetricMultiLabelLoss()(logits.half(), gt.clamp(min=0).half())
    assert torch.isfinite(ours)
    torch.testing.assert_close(
        ours, AsymmetricMultiLabelLoss()(logits.half().float(), gt.clamp(min=0))
    )


def test_the_two_focal_losses_differ():
    z, gt = _random_problem(4, 6, seed=9)
    retina = SigmoidFocalLoss(reduction='sum')(z, gt)
    asl_style = AsymmetricFocalLoss()(z, gt)
    # Without α (α < 0) and summed, the values agree; the gradients do not (detached weights).
    no_alpha, grad_retina = _value_and_grad(SigmoidFocalLoss(alpha=-1, reduction='sum'), z, gt)
    asl_value, grad_asl = _value_and_grad(AsymmetricFocalLoss(clamp_eps=None), z, gt)
    torch.testing.assert_close(no_alpha, asl_value)
    assert not torch.allclose(grad_retina, grad_asl)
    assert not torch.allclose(retina, asl_style)
    # mmpretrain's FocalLoss in a head is SigmoidFocalLoss with reduction='batchmean'.
    from mmpretrain.models.losses import FocalLoss

    valid_gt = gt.clamp(min=0)
    torch.testing.assert_close(
        SigmoidFocalLoss(reduction='batchmean')(z, valid_gt),
        FocalLoss(reduction='mean')(z, valid_gt, avg_factor=4),
    )


# ---------------------------------------------------------------------------------------------
# Two-way.
def test_two_way_closed_forms():
    # One positive, one negative, T_P = T_N = 1: softplus(x_n − x_p) in each way.
    x = torch.tensor([[1.5, -0.5]])
    y = torch.tensor([[1.0, 0.0]])
    sample = two_way_loss(x, y, 1.0, 1.0, classwise=False)
    torch.testing.assert_close(sample, torch.nn.functional.softplus(x[0, 1] - x[0, 0]))
    # A constant shift of all logits cancels (supplement eq. iii).
    z, gt = _random_problem(6, 5, seed=10)
    torch.testing.assert_close(two_way_loss(z + 7.0, gt), two_way_loss(z, gt))
    # Small temperatures approach softplus(max_n x_n − min_p x_p) per set.
    cold = two_way_loss(x, y, 1e-3, 1e-3, classwise=False)
    torch.testing.assert_close(cold, torch.nn.functional.softplus(x[0, 1] - x[0, 0]))


def test_two_way_minus_100_mask_of_the_reference_leaks_at_large_logits():
    """The −inf masks keep an excluded entry out exactly; the reference's additive −100 (after
    dividing by T) lets excluded entries count once they exceed the members by ~100·T."""
    x = torch.tensor([[-50.0, 0.0, 1.0]])
    y = torch.tensor([[1.0, 0.0, -1.0]])
    ours = two_way_loss(x, y, classwise=False)
    torch.testing.assert_close(ours, torch.nn.functional.softplus(torch.tensor(0.0 + 50.0)))
    leak_mask = torch.where(y == 0, 0.0, -100.0)
    leaky_b = torch.logsumexp(x / 1.0 + leak_mask, dim=1)  # −50 − 100 vs 0: tiny here
    leaky_a = 4.0 * torch.logsumexp(-x / 4.0 + torch.where(y == 1, 0.0, -100.0), dim=1)
    torch.testing.assert_close(torch.nn.functional.softplus(leaky_a + leaky_b)[0], ours)
    # ...but a set without negatives: the reference still sees the −100-masked entries.
    y_no_neg = torch.tensor([[1.0, -1.0, -1.0]])
    x_big = torch.tensor([[-50.0, 0.0, 60.0]])
    assert two_way_loss(x_big, y_no_neg, classwise=False) == 0
    leaky_b = torch.logsumexp(x_big + torch.where(y_no_neg == 0, 0.0, -100.0), dim=1)
    leaky_a = 4.0 * torch.logsumexp(-x_big / 4.0 + torch.where(y_no_neg == 1, 0.0, -100.0), 1)
    assert torch.nn.functional.softplus(leaky_a + leaky_b)[0] > 1.0


B, C, IN = 8, 5, 6


def _ddp_data(seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, IN, generator=g)
    gt = (torch.rand(B, C, generator=g) < 0.35).float()
    gt[0, 0], gt[5, 1] = -1.0, -1.0
    gt[:, 4] = 0.0
    gt[6, 4] = 1.0  # class 4: its only positive on rank 1 — per-rank sets differ
    net = nn.Linear(IN, C)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    return x, gt, net


def _ddp_worker(rank, port, global_batch, out_dir):
    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))
    dist.init_process_group('gloo', rank=rank, world_size=2)
    torch.set_num_threads(1)
    x, gt, net = _ddp_data()
    ddp = nn.parallel.DistributedDataParallel(net)
    half = slice(rank * B // 2, (rank + 1) * B // 2)
    loss = TwoWayMultiLabelLoss(global_batch=global_batch)(
        ddp(x[half]), gt[half], avg_factor=B // 2
    )
    loss.backward()
    torch.save(
        {'loss': loss.detach(), 'grad': net.weight.grad.clone()},
        os.path.join(out_dir, f'rank{rank}.pt'),
    )
    dist.destroy_process_group()


def _two_process_run(global_batch, tmp_path):
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    # fork: the workers inherit the imported modules (spawn would re-import torch and mlkd).
    mp.start_processes(
        _ddp_worker,
        args=(port, global_batch, str(tmp_path)),
        nprocs=2,
        join=True,
        start_method='fork',
    )
    return [torch.load(tmp_path / f'rank{r}.pt', weights_only=True) for r in range(2)]


def test_two_way_under_ddp_equals_the_concatenated_batch(tmp_path):
    x, gt, net = _ddp_data()
    single = TwoWayMultiLabelLoss()(net(x), gt)
    single.backward()
    torch.testing.assert_close(single.double(), two_way_reference(net(x).detach(), gt))
    for result in _two_process_run(True, tmp_path):
        torch.testing.assert_close(result['loss'], single.detach(), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(result['grad'], net.weight.grad, rtol=1e-4, atol=1e-6)


def test_two_way_per_gpu_reference_behaviour_differs(tmp_path):
    x, gt, net = _ddp_data()
    with torch.no_grad():
        whole = two_way_loss(net(x), gt)
        halves = [two_way_loss(net(x[s]), gt[s]) for s in (slice(0, B // 2), slice(B // 2, B))]
    net.zero_grad()
    two_way_loss(net(x), gt).backward()
    ranks = _two_process_run(False, tmp_path)
    for result, half in zip(ranks, halves):
        torch.testing.assert_close(result['loss'], half)
        assert not torch.allclose(result['loss'], whole)
    assert not torch.allclose(ranks[0]['grad'], net.weight.grad, rtol=1e-3)


# ---------------------------------------------------------------------------------------------
def test_focal_bce_closed_form_with_finite_gradient_at_saturation():
    """The focal BCE shared by SigmoidFocalLoss, Hill, SPLC and the focal margin loss."""
    z = torch.tensor([[-2.0, 0.5, 3.0, 50.0, -50.0, -50.0]], dtype=torch.float64)
    pos = torch.tensor([[True, False, True, True, False, True]])
    p = torch.sigmoid(z)
    p_t = torch.where(pos, p, 1 - p)
    expected = -((1 - p_t) ** 1.5) * torch.log(p_t)
    torch.testing.assert_close(focal_bce(z, pos, 1.5), expected)
    torch.testing.assert_close(focal_bce(z, pos, 0.0), -torch.log(p_t))
    z.requires_grad_()
    focal_bce(z, pos, 0.5).sum().backward()  # σ(∓z)^0.5 would give inf · 0 through pow
    assert torch.isfinite(z.grad).all()


# Hill, SPLC, focal margin.
def test_hill_negative_closed_form():
    # (λ − p)·p² at p = 1 is λ − 1 = 0.5; its gradient vanishes at both ends.
    x = torch.tensor([[60.0, -60.0, 0.0]], requires_grad=True)
    out = HillLoss()(x, torch.zeros(1, 3), reduction_override='none')
    torch.testing.assert_close(out[0, :2], torch.tensor([0.5, 0.0]))
    torch.testing.assert_close(out[0, 2], torch.tensor((1.5 - 0.5) * 0.25))
    out.sum().backward()
    assert x.grad[0, 0] == 0 and x.grad[0, 1] == 0


def test_splc_corrects_confident_negatives_from_the_change_epoch():
    logits, gt = _random_problem(6, 5, seed=11)
    logits[1, 2], gt[1, 2] = 3.0, 0.0  # σ(3) = 0.95 > τ: a likely missing positive
    logits[2, 3], gt[2, 3] = 3.0, -1.0  # ignored stays ignored
    hub = MessageHub.get_current_instance()
    loss = SPLCLoss()
    try:
        values = {}
        for epoch in (0, 1, 2):
            hub.update_info('epoch', epoch)
            value, grad = _value_and_grad(loss, logits, gt)
            ref, ref_grad = _value_and_grad(
                partial(splc_reference, epoch=epoch), logits, gt, torch.float64
            )
            torch.testing.assert_close(value.double(), ref, rtol=1e-5, atol=1e-6)
            torch.testing.assert_close(grad.double(), ref_grad, rtol=1e-4, atol=1e-6)
            values[epoch] = value
    finally:
        hub.runtime_info.pop('epoch', None)
    torch.testing.assert_close(values[0], FocalMarginLoss()(logits, gt))  # before: no change
    assert not torch.allclose(values[1], values[0])
    torch.testing.assert_close(values[1], splc_loss(logits, gt, epoch=5, change_epoch=1))
    # The corrected entry is pulled up (a positive's gradient is negative), not pushed down.
    _, grad = _value_and_grad(lambda z, y: splc_loss(z, y, epoch=1), logits, gt)
    assert grad[1, 2] < 0 and grad[2, 3] == 0


# ---------------------------------------------------------------------------------------------
# The Two-way paper's baselines: WARP, RML (reconstructed), multi-label softmax.
def test_warp_by_hand():
    """Positive 2.0 violates no margin (rank 0); 1.1 violates against 0.5 and 0.2 (rank 2,
    L = 1 + 1/2): 1.5 · (0.4 + 0.1); positive 0.0 likewise: 1.5 · (1.5 + 1.2). Total 4.8."""
    z = torch.tensor([[2.0, 0.5, 1.1, 0.2, 0.0, 9.0]])
    gt = torch.tensor([[1.0, 0, 1, 0, 1, -1]])  # the ignored 9.0 ranks above everything
    torch.testing.assert_close(WARPLoss()(z, gt), torch.tensor(4.8))
    per_positive = WARPLoss(reduction='none')(z, gt)
    torch.testing.assert_close(per_positive, torch.tensor([[0.0, 0, 0.75, 0, 4.05, 0]]))
    torch.testing.assert_close(WARPLoss(reduction='mean')(z, gt), torch.tensor(4.8 / 6))


def test_warp_sampled_ranks_follow_the_draw_loop():
    """The one-step geometric draw gives the rank distribution of the paper's loop: draw
    negatives uniformly with replacement until a violator, ``s`` draws, ``r = ⌊(c − 1)/s⌋``,
    at most ``c − 1`` draws (else rank 0)."""
    import random

    from mlkd.models.losses.task.ranking import sampled_ranks

    classes, negatives, violators = 10, 7, 2
    n = 200_000
    g = torch.Generator().manual_seed(0)
    ranks = sampled_ranks(
        torch.full((n, 1), violators),
        torch.full((n, 1), negatives),
        classes,
        1 - torch.rand(n, 1, generator=g, dtype=torch.float64),
    ).flatten()
    p = violators / negatives
    expected = {}
    for s in range(1, classes):
        rank = (classes - 1) // s
        expected[rank] = expected.get(rank, 0.0) + (1 - p) ** (s - 1) * p
    expected[0] = expected.get(0, 0.0) + (1 - p) ** (classes - 1)
    for rank, probability in expected.items():
        assert abs(float((ranks == rank).double().mean()) - probability) < 4e-3, rank
    # The literal loop, as a program, agrees in the mean.
    rng = random.Random(1)
    loop = []
    for _ in range(20_000):
        for s in range(1, classes):
            if rng.randrange(negatives) < violators:
                loop.append((classes - 1) // s)
                break
        else:
            loop.append(0)
    assert abs(sum(loop) / len(loop) - float(ranks.mean())) < 0.06
    # No violator: rank 0; every negative a violator: one draw, rank c - 1.
    edge = sampled_ranks(
        torch.tensor([[0, negatives]]),
        torch.tensor([[negatives]]),
        classes,
        torch.tensor([[0.3, 1e-12]], dtype=torch.float64),
    )
    assert edge.tolist() == [[0.0, classes - 1.0]]


def test_warp_sampled_draws_are_a_function_of_the_iteration_and_resume_exactly():
    from mmengine.logging import MessageHub

    from mlkd.models.losses.task.ranking import sampled_ranks

    logits, gt = _random_problem(6, 9, seed=11)
    hub = MessageHub.get_instance('warp_sampled_test')
    hub.update_info('iter', 41)
    first = WARPLoss(rank_estimate='sampled', seed=3)
    value = first(logits, gt)
    resumed = WARPLoss(rank_estimate='sampled', seed=3)  # a fresh module after a resume
    assert resumed(logits, gt) == value == first(logits, gt)
    # The value is WARP with the ranks drawn from this iteration's uniforms.
    pos, neg = gt == 1, gt == 0
    violators = torch.tensor(
        [
            [
                sum(
                    int(neg[i, k] and 1 - logits[i, j] + logits[i, k] > 0)
                    for k in range(gt.shape[1])
                )
                if pos[i, j]
                else 0
                for j in range(gt.shape[1])
            ]
            for i in range(gt.shape[0])
        ]
    )
    ranks = sampled_ranks(
        violators, neg.sum(1, keepdim=True), gt.shape[1], first.draws(logits.shape)
    )
    torch.testing.assert_close(
        value.double(), warp_reference(logits, gt, ranks=ranks.long()), rtol=1e-5, atol=1e-6
    )
    draws_41 = first.draws(logits.shape)
    hub.update_info('iter', 42)
    assert not torch.equal(first.draws(logits.shape), draws_41)  # new draws each step
    hub.update_info('iter', 41)
    other_seed = WARPLoss(rank_estimate='sampled', seed=4)
    assert not torch.equal(other_seed.draws(logits.shape), first.draws(logits.shape))


def test_rml_ramp_caps_a_confidently_wrong_label_without_gradient():
    """A positive at −50: its pair and class-wise ramps sit at the cap 1 − s = 2 with no gradient
    (the robustness to noisy labels); the negative at 0 costs R(0) = 1 with gradient +1."""
    z = torch.tensor([[-50.0, 0.0]], requires_grad=True)
    out = RobustMultiLabelLoss()(z, torch.tensor([[1.0, 0.0]]))
    out.backward()
    assert out.item() == 5.0
    assert z.grad.tolist() == [[0.0, 1.0]]


def test_multilabel_softmax_by_hand_leaves_ignored_entries_out_of_the_normaliser():
    z = torch.tensor([[1.0, 2.0, 100.0], [0.0, 0.0, 0.0]])
    gt = torch.tensor([[1.0, 0.0, -1.0], [1.0, 1.0, 0.0]])
    # Row 0: log(e + e²) − 1 = softplus(1); row 1: log 3 − 0. Mean over the two rows.
    expected = (torch.nn.functional.softplus(torch.tensor(1.0)) + torch.log(torch.tensor(3.0))) / 2
    torch.testing.assert_close(MultiLabelSoftmaxLoss()(z, gt), expected)


def test_baselines_refuse_bad_settings():
    with pytest.raises(ValueError, match='margin'):
        WARPLoss(margin=0)
    with pytest.raises(ValueError, match='rank_estimate'):
        WARPLoss(rank_estimate='approximate')
    with pytest.raises(ValueError, match='ramp_start'):
        RobustMultiLabelLoss(ramp_start=1.0)
    with pytest.raises(ValueError, match='classwise_weight'):
        RobustMultiLabelLoss(classwise_weight=-1)
    with pytest.raises(ValueError, match='reduction'):
        MultiLabelSoftmaxLoss(reduction='batchmean')
