"""Targets are validated once per batch, on the host, in the data preprocessor; the losses read
them without a host-device synchronisation."""

import pytest
import torch
from conftest import REPO, SMALL_TOOL_RUN, run_tool
from mmpretrain.structures import DataSample

import mlkd
from mlkd.models.data_preprocessors import MultiLabelDataPreprocessor
from mlkd.models.losses import (
    AssumeNegativeLoss,
    AsymmetricFocalLoss,
    AsymmetricMultiLabelLoss,
    BinaryCrossEntropySumLoss,
    EntropyMaximisationLoss,
    ExpectedPositivesLoss,
    FocalMarginLoss,
    HillLoss,
    SigmoidFocalLoss,
    SPLCLoss,
    TwoWayMultiLabelLoss,
    UnobservedAsNegative,
    WeakAssumeNegativeLoss,
)
from mlkd.utils.targets import check_batch_labels

#: Every way a tensor's value reaches Python (each waits for the device).
SYNCING = ('__bool__', '__int__', '__float__', '__index__', 'item', 'tolist', 'numpy', 'cpu')


def _batch(labels, **fields):
    samples = []
    for row, label in enumerate(labels):
        sample = DataSample(metainfo=dict(sample_idx=10 + row, img_path=f'img{row}.jpg'))
        sample.set_gt_label(label)
        for name, values in fields.items():
            sample.set_field(values[row], name, field_type='metainfo')
        samples.append(sample)
    return dict(
        inputs=[torch.zeros(3, 4, 4, dtype=torch.uint8)] * len(labels), data_samples=samples
    )


def test_the_preprocessor_refuses_bad_labels_naming_sample_field_and_value():
    pre = MultiLabelDataPreprocessor(num_classes=5)
    with pytest.raises(
        ValueError,
        match=r'gt_label of sample 1 of the batch \(sample_idx 11, '
        r'img1\.jpg\) holds class 7, outside \[0, 5\)',
    ):
        pre(_batch([[0], [2, 7]]))
    with pytest.raises(ValueError, match=r'gt_label_ignored of sample 0 .* holds class -1'):
        pre(_batch([[0], [2]], gt_label_ignored=[[-1, 3], [1]]))
    soft = _batch([[0], [2]])
    for sample, score in zip(
        soft['data_samples'], ([1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.7, 0.0, 0.0])
    ):
        sample.set_gt_score(torch.tensor(score))
    with pytest.raises(
        ValueError,
        match=r'gt_score of sample 1 .* holds 0\.7 for class 2; '
        r'entries must be 0 or 1 \(set soft_targets=True',
    ):
        pre(soft)
    out = MultiLabelDataPreprocessor(num_classes=5, soft_targets=True)(soft)
    torch.testing.assert_close(
        out['data_samples'][1].gt_score, torch.tensor([0.0, 0.0, 0.7, 0.0, 0.0])
    )
    with pytest.raises(
        ValueError, match='batch_augments mix the labels into soft targets; set soft_targets=True'
    ):
        MultiLabelDataPreprocessor(
            num_classes=5, batch_augments=dict(augments=dict(type='Mixup', alpha=0.8))
        )
    # Good labels pass, and the ignored classes become -1 as before.
    good = pre(_batch([[0], [2, 4]], gt_label_ignored=[[1, 2], [0]]))
    torch.testing.assert_close(
        torch.stack([s.gt_score for s in good['data_samples']]),
        torch.tensor([[1.0, -1.0, -1.0, 0.0, 0.0], [-1.0, 0.0, 1.0, 0.0, 1.0]]),
    )


def test_check_batch_labels_accepts_hard_and_ignored_labels():
    batch = _batch([[0, 1], [3]], gt_label_ignored=[[2, 3], []])['data_samples']
    check_batch_labels(batch, 4)  # no error
    with pytest.raises(ValueError, match=r'gt_score of sample 0 .* has 3 entries'):
        check_batch_labels([DataSample().set_gt_score(torch.ones(3))], 4)


def test_a_user_adding_mixup_to_a_hard_target_loss_gets_the_error_from_tools_train(tmp_path):
    """The soft-target refusal that Two-way once made per call now fires once, at start-up."""
    config = tmp_path / 'two_way_mixup.py'  # the user's own leaf on a shipped config
    config.write_text(
        f"_base_ = ['{REPO}/configs/task_losses/resnet_student_two_way.py']\n"
        'data_preprocessor = dict(batch_augments=dict(augments=dict('
        "type='Mixup', alpha=0.8)))\n"
    )
    run = run_tool(
        'tools/train.py',
        str(config),
        '--work-dir',
        str(tmp_path / 'work'),
        '--cfg-options',
        *SMALL_TOOL_RUN,
    )
    assert run.returncode != 0
    assert 'batch_augments mix the labels into soft targets; set soft_targets=True' in run.stderr


LOSSES = {
    'bce': lambda: BinaryCrossEntropySumLoss(),
    'asl': lambda: AsymmetricMultiLabelLoss(),
    'asl_focal': lambda: AsymmetricFocalLoss(),
    'sigmoid_focal': lambda: SigmoidFocalLoss(),
    'two_way': lambda: TwoWayMultiLabelLoss(),
    'two_way_classwise': lambda: TwoWayMultiLabelLoss(samplewise=False),
    'hill': lambda: HillLoss(),
    'focal_margin': lambda: FocalMarginLoss(),
    'splc': lambda: SPLCLoss(),
    'unobserved_as_negative': lambda: UnobservedAsNegative(loss=dict(type='HillLoss')),
    'an': lambda: AssumeNegativeLoss(),
    'wan': lambda: WeakAssumeNegativeLoss(num_classes=6),
    'epr': lambda: ExpectedPositivesLoss(expected_positives=2.0),
    'en': lambda: EntropyMaximisationLoss(),
}


@pytest.mark.parametrize('name', LOSSES)
def test_loss_forward_and_backward_do_not_synchronise(name, monkeypatch):
    mlkd.register_all_modules()
    loss = LOSSES[name]()
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(4, 6, generator=g, requires_grad=True)
    gt = torch.randint(-1, 2, (4, 6), generator=g).float()
    gt[:, 0] = 1.0
    calls = []
    for method in SYNCING:
        original = getattr(torch.Tensor, method)

        def spy(self, *args, _original=original, _method=method, **kwargs):
            calls.append(_method)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, method, spy)
    value = loss(logits, gt)
    value.backward()
    monkeypatch.undo()
    assert calls == [], f'{name} reads tensor values on the host: {calls}'
    assert torch.isfinite(value) and torch.isfinite(logits.grad).all()
