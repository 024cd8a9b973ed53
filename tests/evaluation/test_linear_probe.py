"""The L-BFGS linear probe (Two-way paper's transfer study) against independent computations:
scikit-learn's multinomial logistic regression, a one-parameter closed form, the objective's
gradient at the solution, and a toy whose chosen L2 weight follows from a scipy minimisation."""

import math

import numpy as np
import pytest
import torch
from scipy.optimize import brentq, minimize
from sklearn.linear_model import LogisticRegression

from mlkd.evaluation.linear_probe import (
    fit_linear_probe,
    l2_grid,
    probe_accuracy,
    probe_objective,
    select_and_evaluate,
    stratified_holdout,
)


def _blobs(n_per_class: int, num_classes: int = 3, dim: int = 4, seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    centres = 2 * torch.randn(num_classes, dim, generator=generator, dtype=torch.float64)
    labels = torch.arange(num_classes).repeat_interleave(n_per_class)
    features = centres[labels] + torch.randn(
        len(labels), dim, generator=generator, dtype=torch.float64
    )
    return features, labels


def test_grid_is_the_supplements_45_log_spaced_values():
    grid = l2_grid()
    assert len(grid) == 45 and grid[0] == pytest.approx(1e-6) and grid[-1] == pytest.approx(1e5)
    np.testing.assert_allclose(np.diff(np.log10(grid)), 11 / 44)


@pytest.mark.parametrize('l2', [1e-3, 0.1, 3.0])
def test_fit_matches_sklearn_and_zeroes_the_gradient(l2):
    features, labels = _blobs(20)
    weight, bias = fit_linear_probe(features, labels, 3, l2)
    # Stationary point: the gradient of J (autograd, independent of L-BFGS's own) vanishes.
    w, b = weight.clone().requires_grad_(), bias.clone().requires_grad_()
    probe_objective(w, b, features, labels, l2).backward()
    assert w.grad.abs().max() < 1e-6 and b.grad.abs().max() < 1e-6
    # scikit-learn minimises ½‖W‖² + C Σ CE (intercept unpenalised): C = 1 / (λ N).
    reference = LogisticRegression(C=1 / (l2 * len(labels)), tol=1e-12, max_iter=10000)
    reference.fit(features.numpy(), labels.numpy())
    np.testing.assert_allclose(weight.numpy(), reference.coef_, atol=1e-4)
    probs = (features @ weight.T + bias).softmax(1).numpy()
    np.testing.assert_allclose(probs, reference.predict_proba(features.numpy()), atol=1e-5)
    ours = probe_objective(weight, bias, features, labels, l2).item()
    theirs = probe_objective(
        torch.from_numpy(reference.coef_),
        torch.from_numpy(reference.intercept_),
        features,
        labels,
        l2,
    ).item()
    assert ours <= theirs + 1e-12
    # The optimum does not depend on the start (strict convexity): a warm start lands there too.
    warm = fit_linear_probe(features, labels, 3, l2, init=(weight + 1, bias - 2))
    np.testing.assert_allclose(warm[0].numpy(), weight.numpy(), atol=1e-4)


def test_one_feature_two_classes_closed_form():
    # x = +1 for class 1, -1 for class 0, balanced: W = [-w, w], b0 = b1, and
    # J = -log σ(2w) + λ w², so λ w = σ(-2w).
    features = torch.tensor([[1.0], [-1.0]] * 5, dtype=torch.float64)
    labels = torch.tensor([1, 0] * 5)
    for l2 in (0.01, 1.0, 100.0):
        w = brentq(lambda v, l2=l2: l2 * v - 1 / (1 + math.exp(2 * v)), 0, 1 / l2)
        weight, bias = fit_linear_probe(features, labels, 2, l2)
        assert weight[1, 0].item() == pytest.approx(w, rel=1e-6)
        assert weight[0, 0].item() == pytest.approx(-w, rel=1e-6)
        assert (bias[1] - bias[0]).item() == pytest.approx(0, abs=1e-7)
        assert probe_accuracy(weight, bias, features, labels) == 1.0


def test_stratified_holdout():
    labels = torch.tensor([0] * 10 + [1] * 5 + [2] * 1 + [3] * 2)
    train, val = stratified_holdout(labels, 0.2, seed=1)
    assert sorted(torch.cat([train, val]).tolist()) == list(range(len(labels)))
    counts = torch.bincount(labels[val], minlength=4).tolist()
    assert counts == [2, 1, 0, 1]  # round(0.2 n), at least 1 when n >= 2, never the whole class
    again = stratified_holdout(labels, 0.2, seed=1)
    assert torch.equal(again[1], val)
    assert not torch.equal(stratified_holdout(labels, 0.2, seed=2)[1], val)
    with pytest.raises(ValueError, match='fraction'):
        stratified_holdout(labels, 1.0)


def test_selection_picks_the_strongest_weight_that_still_separates():
    # 30 % class 1 at x = +1, 70 % class 0 at x = -1. With W = [-w, w] and δ = b1 - b0,
    # J(w, δ) = -0.3 log σ(2w + δ) - 0.7 log σ(2w - δ) + λ w²; a strong λ shrinks w until the
    # bias wins and class 1 is lost (accuracy 0.7). The holdout keeps the 30 / 70 proportions, so
    # the validation accuracy at λ is 1 exactly when 2w + δ > 0 at J's minimiser.
    features = torch.tensor([[1.0]] * 30 + [[-1.0]] * 70, dtype=torch.float64)
    labels = torch.tensor([1] * 30 + [0] * 70)

    def separates(l2: float) -> bool:
        def objective(p):
            w, d = p
            return (
                0.3 * np.logaddexp(0, -(2 * w + d))
                + 0.7 * np.logaddexp(0, -(2 * w - d))
                + l2 * w * w
            )

        w, d = minimize(objective, [0.0, 0.0], method='BFGS', options=dict(gtol=1e-12)).x
        assert abs(2 * w + d) > 1e-4  # no grid point sits on the boundary
        return 2 * w + d > 0

    grid = l2_grid()
    expected = max(l2 for l2 in grid if separates(l2))
    assert grid[0] < expected < grid[-1]  # the grid crosses the boundary
    result = select_and_evaluate(
        features, labels, features, labels, 2, selection='val', val_fraction=0.2
    )
    assert result.l2 == pytest.approx(expected)
    assert result.test_accuracy == 1.0
    assert (result.num_train, result.num_val, result.num_test) == (80, 20, 100)
    assert result.selection_accuracy[-1] == pytest.approx(0.7)
    assert result.selection_accuracy == [1.0 if separates(l2) else 0.7 for l2 in grid]
    # The supplement's reading chooses on the test set: the same boundary here.
    on_test = select_and_evaluate(features, labels, features, labels, 2, selection='test')
    assert on_test.l2 == pytest.approx(expected) and on_test.test_accuracy == 1.0


def test_bad_inputs_are_named():
    features, labels = _blobs(3)
    with pytest.raises(ValueError, match=r'labels must be class indices in \[0, 2\)'):
        fit_linear_probe(features, labels, 2, 1.0)
    with pytest.raises(ValueError, match='must be > 0'):
        fit_linear_probe(features, labels, 3, 0.0)
    with pytest.raises(ValueError, match=r'test set: features must be \[N, D\]'):
        select_and_evaluate(features, labels, features[:, 0], labels, 3)
