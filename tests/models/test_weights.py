"""network_state: the one classifier inside the state dicts mlkd writes; non_finite_keys: the
tensors that hold a NaN or an inf."""

import math

import pytest
import torch

from mlkd.models.weights import network_state, non_finite_keys, resolve_checkpoint


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


def test_non_finite_keys_names_exactly_the_tensors_with_a_nan_or_an_inf():
    """Checked against an element-wise loop, including finite tensors whose sum overflows (the
    fast path's sum is not finite there, and they must not be named)."""
    big = torch.finfo(torch.float32).max
    named = {
        'ok': torch.randn(3, 4),
        'nan': torch.tensor([1.0, float('nan')]),
        'inf': torch.tensor([float('inf'), 2.0]),
        'minus_inf': torch.tensor([[-float('inf')]]),
        'inf_and_minus_inf': torch.tensor([float('inf'), -float('inf')]),  # sums to NaN
        'overflowing_sum': torch.full((4,), big),  # finite, sum inf
        'half_overflowing_sum': torch.full((4,), 60000.0, dtype=torch.float16),  # finite
        'half_inf': torch.tensor([float('inf')], dtype=torch.float16),
        'double': torch.tensor([1e300, 1e300], dtype=torch.float64),  # finite, float32 would not be
        'integer': torch.tensor([1, 2]),  # not floating point: never named
    }
    expected = [
        k
        for k, v in named.items()
        if v.is_floating_point() and not all(math.isfinite(x) for x in v.flatten().tolist())
    ]
    assert expected == ['nan', 'inf', 'minus_inf', 'inf_and_minus_inf', 'half_inf']
    assert non_finite_keys(named) == expected
    assert non_finite_keys(list(named.items())) == expected
    finite = {k: named[k] for k in ('ok', 'overflowing_sum', 'half_overflowing_sum', 'double')}
    assert non_finite_keys(finite) == []
    assert non_finite_keys({}) == []


def test_a_checkpoint_path_of_a_scheme_read_in_full_is_refused():
    """torchvision:// and kin are read by mmengine's own loaders, which unpickle in full; an
    http(s) URL is read weights-only (tests/utils/test_compat.py), a missing file is named."""
    with pytest.raises(ValueError, match=r"teacher: 'torchvision://resnet18': a checkpoint is"):
        resolve_checkpoint('torchvision://resnet18', 'teacher')
    assert resolve_checkpoint('https://example.invalid/t.pth') == 'https://example.invalid/t.pth'
    with pytest.raises(FileNotFoundError, match="teacher: checkpoint file not found: 'no.pth'"):
        resolve_checkpoint('no.pth', 'teacher')


def test_a_distillation_checkpoint_given_for_a_teacher_says_its_student_was_read(tmp_path):
    """A distillation run's checkpoint contributes its student (a distilled student reused as a
    teacher); where that does not fit, the message says which part was read."""
    from conftest import MULTIDIGITS_STUDENT, MULTIDIGITS_TEACHER

    from mlkd.apis.inference import build_classifier
    from mlkd.models.weights import load_network_checkpoint

    student, _, _ = build_classifier(MULTIDIGITS_STUDENT)
    teacher, _, _ = build_classifier(MULTIDIGITS_TEACHER)
    state = {f'student.{k}': v for k, v in student.state_dict().items()}
    state.update({f'teacher.{k}': v for k, v in teacher.state_dict().items()})
    path = str(tmp_path / 'kd.pth')
    torch.save({'state_dict': state}, path)
    with pytest.raises(
        ValueError, match=r'It is a distillation checkpoint: its student \("student.'
    ):
        load_network_checkpoint(teacher, path, 'teacher')
    load_network_checkpoint(student, path, 'teacher')  # a distilled student as a teacher: fits
