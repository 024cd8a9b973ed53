"""The target is built once (by the preprocessor) and every consumer ignores the same entries."""

import torch
from conftest import DIGITS_STUDENT_CFG, build_model, digits_distiller
from mmpretrain.structures import DataSample

from mlkd.evaluation.metrics import MultiLabelMetrics

C = 10


def _voc_like_batch():
    """Image 0 has a difficult-only class 4 and class 2 both normal and difficult; image 1 has a
    real class 4, so an entry wrongly counted as a negative would change class 4's AP."""
    g = torch.Generator().manual_seed(0)
    samples = []
    for i in range(4):
        sample = DataSample().set_gt_label([i % C, 2] + ([4] if i == 1 else []))
        sample.set_metainfo(dict(gt_label_difficult=[4, 2] if i == 0 else []))
        samples.append(sample)
    inputs = list(torch.randint(0, 256, (4, 3, 32, 32), generator=g, dtype=torch.uint8))
    pre = build_model(
        dict(type='MultiLabelDataPreprocessor', num_classes=C, mean=[0.0] * 3, std=[255.0] * 3)
    )
    return pre({'inputs': inputs, 'data_samples': samples}, training=True)


def test_the_preprocessor_marks_difficult_only_classes_once():
    data = _voc_like_batch()
    target = data['data_samples'][0].gt_score
    expected = torch.zeros(C)
    expected[[0, 2]] = 1.0
    expected[4] = -1.0
    torch.testing.assert_close(target, expected)
    assert (data['data_samples'][1].gt_score >= 0).all()
    assert data['data_samples'][1].gt_score[4] == 1


def test_task_loss_distillation_loss_and_metrics_all_ignore_the_difficult_entry():
    data = _voc_like_batch()
    model = digits_distiller(
        teacher=DIGITS_STUDENT_CFG,
        distill_losses=dict(
            ndd=dict(type='NegativeDiscrepancyLoss', form='exact'),
            pd=dict(type='PositiveDivideLoss'),
        ),
    )
    logits = {}
    model.student.head.fc.register_forward_hook(lambda m, a, out: logits.update(s=out))
    model.student.head.fc.register_forward_hook(lambda m, a, out: out.retain_grad())
    losses = model.loss(data['inputs'], data['data_samples'])
    for key in ('loss_cls', 'loss_ndd', 'loss_pd'):
        (grad,) = torch.autograd.grad(losses[key], logits['s'], retain_graph=True)
        assert grad[0, 4] == 0, key  # ignored: no gradient at all
        assert grad.abs().sum() > 0, key  # the loss is alive elsewhere

    # The metrics drop the entry too: its score cannot change mAP.
    def metric_with(score):
        metric = MultiLabelMetrics(conventions=('threshold',))
        scores = torch.rand(4, C, generator=torch.Generator().manual_seed(1))
        scores[0, 4] = score
        records = []
        for sample, row in zip(data['data_samples'], scores):
            record = sample.to_dict()
            record['pred_score'] = row
            records.append(record)
        metric.process(None, records)
        return metric.evaluate(4)['mAP']

    assert metric_with(0.0) == metric_with(1.0)


def test_channels_last_changes_the_memory_order_only():
    g = torch.Generator().manual_seed(1)
    batch = {
        'inputs': list(torch.randint(0, 256, (3, 3, 8, 8), generator=g, dtype=torch.uint8)),
        'data_samples': [DataSample().set_gt_label([i]) for i in range(3)],
    }
    common = dict(type='MultiLabelDataPreprocessor', num_classes=C, mean=[0.0] * 3, std=[255.0] * 3)
    plain = build_model(common)(dict(batch), training=True)['inputs']
    fast = build_model(dict(common, channels_last=True))(dict(batch), training=True)['inputs']
    assert plain.is_contiguous() and not plain.is_contiguous(memory_format=torch.channels_last)
    assert fast.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(fast, plain)
