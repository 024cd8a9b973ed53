"""Linear evaluation of frozen features (transfer learning), as in T. Kobayashi, "Two-way
Multi-Label Loss", CVPR 2023 (Sec. 4.4, Table 8; supplement §B and Table A).

The supplement's protocol: a ResNet-50 trained with each loss is frozen; a linear (FC) classifier
is fit on a downstream dataset's features with L-BFGS and an L2 regularisation weight taken from
45 values equally spaced on a log scale in [1e-6, 1e5]. The paper reports the best test accuracy
over those weights; here the weight is chosen on a validation split held out from the training
set (:func:`select_and_evaluate`, ``selection='val'``, the default), and the paper's reading is
available as ``selection='test'``.

The classifier minimises the mean softmax cross-entropy plus an L2 penalty on the weights (not on
the bias)::

    J(W, b) = (1 / N) Σ_i CE(W x_i + b, y_i) + (λ / 2) ‖W‖²_F

with full-batch L-BFGS (strong Wolfe line search). ``J`` is strictly convex in ``W`` for λ > 0, so
the solution does not depend on the starting point; the grid is walked from the largest λ down,
each fit warm-started from the previous solution.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

__all__ = [
    'l2_grid',
    'probe_objective',
    'fit_linear_probe',
    'probe_accuracy',
    'stratified_holdout',
    'ProbeResult',
    'select_and_evaluate',
]


def l2_grid(num: int = 45, low: float = 1e-6, high: float = 1e5) -> list[float]:
    """``num`` L2 weights equally spaced on a log scale in ``[low, high]`` (the supplement's 45
    values in [1e-6, 1e5] by default), ascending."""
    if num < 1 or not 0 < low <= high:
        raise ValueError(f'l2_grid needs num >= 1 and 0 < low <= high; got {num}, {low}, {high}')
    return torch.logspace(
        torch.log10(torch.tensor(low, dtype=torch.float64)),
        torch.log10(torch.tensor(high, dtype=torch.float64)),
        num,
        dtype=torch.float64,
    ).tolist()


def _check_features(
    features: torch.Tensor, labels: torch.Tensor, num_classes: int, where: str
) -> None:
    if features.ndim != 2 or labels.shape != (len(features),):
        raise ValueError(
            f'{where}: features must be [N, D] and labels [N]; got '
            f'{tuple(features.shape)} and {tuple(labels.shape)}'
        )
    if len(labels) and (labels.min() < 0 or labels.max() >= num_classes):
        raise ValueError(
            f'{where}: labels must be class indices in [0, {num_classes}); got '
            f'[{int(labels.min())}, {int(labels.max())}]'
        )


def probe_objective(
    weight: torch.Tensor,
    bias: torch.Tensor,
    features: torch.Tensor,
    labels: torch.Tensor,
    l2: float,
) -> torch.Tensor:
    """``J(W, b)`` of the module docstring: mean cross-entropy + ``l2 / 2 · ‖W‖²``.

    Args:
        weight: ``[C, D]``; bias: ``[C]``; features: ``[N, D]``; labels: ``[N]`` class indices.
    """
    logits = features @ weight.T + bias
    return F.cross_entropy(logits, labels) + 0.5 * l2 * weight.pow(2).sum()


def fit_linear_probe(
    features: torch.Tensor,
    labels: torch.Tensor,
    num_classes: int,
    l2: float,
    max_iter: int = 1000,
    init: tuple[torch.Tensor, torch.Tensor] | None = None,
    tolerance: float = 1e-9,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Minimise :func:`probe_objective` with full-batch L-BFGS.

    Args:
        features: ``[N, D]`` (their dtype and device are the fit's).
        labels: ``[N]`` class indices.
        num_classes: ``C``.
        l2: the L2 weight λ (> 0).
        max_iter: L-BFGS iterations at most.
        init: ``(weight [C, D], bias [C])`` to start from (a warm start); zeros by default.
        tolerance: L-BFGS stops when the largest gradient entry falls below it.

    Returns:
        ``weight [C, D]`` and ``bias [C]`` (detached).
    """
    _check_features(features, labels, num_classes, 'fit_linear_probe')
    if l2 <= 0:
        raise ValueError(f'fit_linear_probe: the L2 weight must be > 0, got {l2}')
    shape = (num_classes, features.shape[1])
    if init is None:
        weight = features.new_zeros(shape)
        bias = features.new_zeros(num_classes)
    else:
        weight, bias = (t.detach().to(features).clone() for t in init)
        if weight.shape != shape or bias.shape != (num_classes,):
            raise ValueError(
                f'fit_linear_probe: init must be ({shape}, ({num_classes},)); got '
                f'{tuple(weight.shape)}, {tuple(bias.shape)}'
            )
    weight.requires_grad_(True)
    bias.requires_grad_(True)
    optimizer = torch.optim.LBFGS(
        [weight, bias],
        lr=1,
        max_iter=max_iter,
        history_size=20,
        tolerance_grad=tolerance,
        tolerance_change=1e-12,
        line_search_fn='strong_wolfe',
    )

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        loss = probe_objective(weight, bias, features, labels, l2)
        loss.backward()
        return loss

    with torch.enable_grad():
        optimizer.step(closure)
    return weight.detach(), bias.detach()


def probe_accuracy(
    weight: torch.Tensor, bias: torch.Tensor, features: torch.Tensor, labels: torch.Tensor
) -> float:
    """Top-1 accuracy (a fraction) of the linear classifier on ``features [N, D]``; ties in the
    logits go to the lowest class index (``argmax``)."""
    if len(labels) == 0:
        return float('nan')
    return float(((features @ weight.T + bias).argmax(1) == labels).double().mean())


def stratified_holdout(
    labels: torch.Tensor, fraction: float, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Split indices ``0..N-1`` into (train, validation), class by class.

    Of each class with ``n`` samples, ``round(fraction · n)`` random ones go to validation, but
    at least one stays in training and, when ``n >= 2``, at least one goes to validation. The
    draw depends only on ``seed`` (a CPU generator), so the split is the same on every device.

    Returns:
        sorted ``train_idx`` and ``val_idx`` (``[N_train]``, ``[N_val]`` long tensors).
    """
    if not 0 < fraction < 1:
        raise ValueError(f'stratified_holdout: fraction must be in (0, 1), got {fraction}')
    labels = labels.cpu().long()
    generator = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(labels), generator=generator)
    # Stable sort by class keeps the random order inside each class.
    order = order[torch.sort(labels[order], stable=True).indices]
    sorted_labels = labels[order]
    counts = torch.bincount(sorted_labels)
    starts = torch.cumsum(counts, 0) - counts
    rank = torch.arange(len(labels)) - starts[sorted_labels]
    quota = torch.round(fraction * counts.double()).long()
    quota = torch.minimum(torch.clamp(quota, min=(counts >= 2).long()), counts - 1)
    is_val = rank < quota[sorted_labels]
    return torch.sort(order[~is_val]).values, torch.sort(order[is_val]).values


@dataclass
class ProbeResult:
    """What :func:`select_and_evaluate` found.

    ``grid`` is ascending; ``selection_accuracy[k]`` is the accuracy at ``grid[k]`` on the split
    the weight was chosen on (validation, or test for ``selection='test'``).
    """

    selection: str
    grid: list[float]
    selection_accuracy: list[float]
    l2: float
    test_accuracy: float
    num_train: int
    num_val: int
    num_test: int


def _sweep(features, labels, eval_features, eval_labels, num_classes, grid, max_iter):
    """Accuracy on the evaluation set at every λ of ``grid``, fitting from the largest λ down."""
    accuracy = [0.0] * len(grid)
    init = None
    for k in sorted(range(len(grid)), key=lambda k: -grid[k]):
        init = fit_linear_probe(features, labels, num_classes, grid[k], max_iter, init)
        accuracy[k] = probe_accuracy(*init, eval_features, eval_labels)
    return accuracy


def select_and_evaluate(
    train_features: torch.Tensor,
    train_labels: torch.Tensor,
    test_features: torch.Tensor,
    test_labels: torch.Tensor,
    num_classes: int,
    grid: list[float] | None = None,
    selection: str = 'val',
    val_fraction: float = 0.2,
    seed: int = 0,
    refit: bool = True,
    max_iter: int = 1000,
) -> ProbeResult:
    """Choose the L2 weight of the linear probe and report its test accuracy.

    ``selection='val'``: :func:`stratified_holdout` takes ``val_fraction`` of the training set
    (per class, ``seed``) as a validation split; a probe is fit on the rest for every λ of
    ``grid``; the λ with the best validation accuracy is chosen, ties going to the largest λ (the
    strongest regularisation); the probe is then refit at that λ on the whole training set
    (``refit=True``, the usual practice; ``False`` keeps the probe fit without the validation
    split) and evaluated on the test set.

    ``selection='test'`` is the supplement's reading ("we report the best performance over those
    regularization parameters"): a probe on the whole training set per λ, the best test
    accuracy reported (optimistic: the test set chooses λ).

    Args:
        train_features / test_features: ``[N, D]`` features (fit in float64, on their device);
            train_labels / test_labels: ``[N]``.
        num_classes: ``C``.
        grid: the λ values (default :func:`l2_grid`: 45 in [1e-6, 1e5]).

    Returns:
        a :class:`ProbeResult`.
    """
    _check_features(train_features, train_labels, num_classes, 'training set')
    _check_features(test_features, test_labels, num_classes, 'test set')
    # In fp32, L-BFGS stops short on the nearly flat objectives of large λ, where a decision is
    # a tiny logit difference: float64 gives the optimum that scikit-learn finds.
    train_features, test_features = train_features.double(), test_features.double()
    if selection not in ('val', 'test'):
        raise ValueError(f"selection must be 'val' or 'test', got {selection!r}")
    grid = sorted(grid or l2_grid())
    if selection == 'test':
        accuracy = _sweep(
            train_features, train_labels, test_features, test_labels, num_classes, grid, max_iter
        )
        best = max(k for k in range(len(grid)) if accuracy[k] == max(accuracy))
        return ProbeResult(
            'test',
            grid,
            accuracy,
            grid[best],
            accuracy[best],
            len(train_labels),
            0,
            len(test_labels),
        )
    train_idx, val_idx = stratified_holdout(train_labels, val_fraction, seed)
    device = train_labels.device
    train_idx, val_idx = train_idx.to(device), val_idx.to(device)
    accuracy = _sweep(
        train_features[train_idx],
        train_labels[train_idx],
        train_features[val_idx],
        train_labels[val_idx],
        num_classes,
        grid,
        max_iter,
    )
    best = max(k for k in range(len(grid)) if accuracy[k] == max(accuracy))
    fit_on = slice(None) if refit else train_idx
    weight, bias = fit_linear_probe(
        train_features[fit_on], train_labels[fit_on], num_classes, grid[best], max_iter
    )
    return ProbeResult(
        'val',
        grid,
        accuracy,
        grid[best],
        probe_accuracy(weight, bias, test_features, test_labels),
        len(train_idx),
        len(val_idx),
        len(test_labels),
    )
