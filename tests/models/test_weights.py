"""network_state: the one classifier inside the state dicts mlkd writes."""

import torch

from mlkd.models.weights import network_state


def test_network_state_unwraps_each_layout():
    weights = {'backbone.conv.weight': torch.ones(2), 'head.fc.bias': torch.zeros(3)}
    # A plain classifier, a DDP-wrapped one.
    assert dict(network_state(weights)) == weights
    assert dict(network_state({f'module.{k}': v for k, v in weights.items()})) == weights
    # A distiller: the student, not the teacher.
    distiller = {
        **{f'student.{k}': v for k, v in weights.items()},
        'teacher.backbone.conv.weight': torch.full((2,), 7.0),
    }
    assert dict(network_state(distiller)) == weights
    # A ClassifierWithLosses: its classifier, without the losses' state.
    with_losses = {
        **{f'classifier.{k}': v for k, v in weights.items()},
        'loss_router.losses.intra.cache': torch.zeros(4, 2),
    }
    assert dict(network_state(with_losses)) == weights
