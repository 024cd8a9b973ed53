"""The loss guard of every training step: NaN / inf and exploding losses, inside parse_losses and
the optimizer wrapper (the runs that hit them are in tests/tools/test_bad_inputs.py)."""

import pytest
import torch
from conftest import DIGITS_STUDENT_CFG, build_model
from mmengine.logging import MessageHub

from mlkd.engine.optimizers import GuardedOptimWrapper
from mlkd.models.algorithms import (
    DivergedTrainingError,
    LossDivergence,
    LossGuard,
    NonFiniteTrainingError,
)


@pytest.fixture
def at_iteration():
    """Put the step at 0-based (epoch, iteration) in a message hub, as RuntimeInfoHook does."""
    hub = MessageHub.get_instance('test_loss_guard')

    def at(epoch: int, iteration: int) -> None:
        hub.update_info('epoch', epoch)
        hub.update_info('iter', iteration)

    return at


def test_the_non_finite_loss_term_is_named(at_iteration):
    at_iteration(0, 6)
    guard = LossGuard()
    log_vars = {
        'loss': torch.tensor(float('inf')),
        'loss_cls': torch.tensor(0.5),
        'loss_kd': torch.tensor(float('inf')),
    }
    with pytest.raises(
        NonFiniteTrainingError,
        match=r"epoch 1, iteration 7 \(1-based\): \['loss_kd'\]. "
        'Losses: loss=inf, loss_cls=0.5, loss_kd=inf',
    ):
        guard(log_vars['loss'], log_vars)
    log_vars.update(loss=torch.tensor(0.5), loss_kd=torch.tensor(0.0))
    guard(log_vars['loss'], log_vars)  # finite: passes


def test_loss_divergence_against_the_starting_level():
    """Hand-worked sequences: reference = the smallest of the first 3 totals."""
    watch = LossDivergence(factor=10, reference_iters=3)
    assert [watch.update(v, {}) for v in (345.0, 300.0, 320.0)] == [False] * 3
    assert watch.reference['loss'] == 300.0
    assert not watch.update(2999.0, {})  # 10 x 300 is the limit
    assert watch.update(3001.0, {})
    # Later values do not move the reference: a falling loss never triggers.
    falling = LossDivergence(factor=10, reference_iters=2)
    assert not any(falling.update(v, {}) for v in (345.0, 200.0, 1.0, 1e-3, 2.0, 100.0))
    # A loss that explodes on the second iteration is caught there.
    assert LossDivergence(1e4, 10).update(110.0, {}) is False
    exploding = LossDivergence(1e4, 10)
    exploding.update(110.0, {})
    assert exploding.update(1.3e13, {})
    # A reference of 0 switches the check off (for the total or a term).
    zero = LossDivergence(factor=10, reference_iters=1)
    zero.update(0.0, {'loss_kd': 0.0})
    assert not zero.update(1e9, {}) and zero.grown_terms({'loss_kd': 1e9}) == []
    with pytest.raises(ValueError, match='divergence_factor must be > 1'):
        LossDivergence(factor=1)


def test_the_diverging_loss_term_is_named_and_the_check_can_be_switched_off(at_iteration):
    at_iteration(1, 9)
    log_vars = {'loss_cls': torch.tensor(100.0), 'loss_kd': torch.tensor(1.0)}

    def run(guard, kd_values):
        for kd in kd_values:
            log_vars['loss_kd'] = torch.tensor(kd)
            total = sum(log_vars.values())
            guard(total, {'loss': total, **log_vars})

    run(LossGuard.from_config(dict(divergence_factor=None), 'model.loss_guard'), [1.0, 1e30])
    with pytest.raises(
        DivergedTrainingError,
        match=r'epoch 2, iteration 10 .* grown terms: '
        r"\['loss_kd'\]. Losses: loss=1e\+06, loss_cls=100, loss_kd=1e\+06.* raise "
        r'model.loss_guard.divergence_factor',
    ):
        run(LossGuard.from_config(dict(divergence_factor=1e3), 'model.loss_guard'), [1.0, 1e6])
    with pytest.raises(TypeError, match=r"model.loss_guard has unknown key\(s\) \['factor'\]"):
        LossGuard.from_config(dict(factor=3), 'model.loss_guard')


def _classifier_with_losses(**kwargs):
    return build_model(
        dict(type='ClassifierWithLosses', classifier=DIGITS_STUDENT_CFG, probe_input_size=(32, 32))
        | kwargs
    )


def test_an_algorithm_parse_losses_refuses_a_non_finite_term_when_guarded(at_iteration):
    at_iteration(2, 4)
    losses = {'loss_cls': torch.tensor(0.5), 'loss_aux': torch.tensor(float('nan'))}
    with pytest.raises(NonFiniteTrainingError, match=r"epoch 3, iteration 5 .*\['loss_aux'\]"):
        _classifier_with_losses(loss_guard=dict()).parse_losses(losses)
    loss, log_vars = _classifier_with_losses(loss_guard=None).parse_losses(losses)
    assert torch.isnan(loss) and set(log_vars) == {'loss', 'loss_cls', 'loss_aux'}


def _wrapper(parameter: torch.nn.Parameter) -> GuardedOptimWrapper:
    return GuardedOptimWrapper(optimizer=torch.optim.SGD([parameter], lr=0.1))


class _Plain(torch.nn.Module):
    """A model that does not guard its own losses (as mmpretrain's ImageClassifier)."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(2))


def test_the_wrapper_guards_the_total_of_a_model_without_its_own_guard(at_iteration):
    at_iteration(0, 0)
    model = _Plain()
    wrapper = _wrapper(model.weight)
    with wrapper.optim_context(model):
        loss = (model.weight * float('nan')).sum()
    with pytest.raises(NonFiniteTrainingError, match=r"iteration 1 \(1-based\): \['loss'\]"):
        wrapper.update_params(loss)
    assert model.weight.grad is None and torch.equal(
        model.weight.detach(), torch.ones(2)
    )  # no backward

    # A model that guards its own losses (its parse_losses ran first) is left to its guard.
    algorithm = _classifier_with_losses(loss_guard=dict(divergence_factor=None))
    weight = next(algorithm.parameters())
    before = weight.detach().clone()
    wrapper = _wrapper(weight)
    with wrapper.optim_context(algorithm):
        loss = (weight * float('inf')).sum()
    with pytest.raises(NonFiniteTrainingError, match='non-finite gradient'):
        wrapper.update_params(loss)  # the loss passes; its gradient is refused before the step
    assert torch.equal(weight, before)


def test_the_wrapper_never_applies_a_non_finite_gradient_and_names_the_parameter(at_iteration):
    at_iteration(0, 1)
    model = _Plain()
    wrapper = _wrapper(model.weight)
    with wrapper.optim_context(model):
        pass  # the training step enters it: the wrapper knows the parameters' names
    model.weight.grad = torch.tensor([0.0, float('inf')])
    with pytest.raises(
        NonFiniteTrainingError, match=r"non-finite gradient at .*iteration 2 .* in \['weight'\]"
    ):
        wrapper.step()
    assert torch.equal(model.weight.detach(), torch.ones(2))
    model.weight.grad = torch.tensor([0.0, 1.0])
    wrapper.step()  # finite: applied
    assert torch.equal(model.weight.detach(), torch.tensor([1.0, 0.9]))
