"""Routing of named tensors to losses: remapping, list sources, key names, build-time errors."""

import pytest
import torch
import torch.nn.functional as F
from conftest import DIGITS_STUDENT_CFG, build_model, digits_distiller, register_test_losses
from mmpretrain.structures import DataSample

from mlkd.registry import MODELS

register_test_losses()


def _batch(size=4, num_classes=10, seed=0):
    g = torch.Generator().manual_seed(seed)
    inputs = torch.rand(size, 3, 32, 32, generator=g)
    samples = [
        DataSample().set_gt_label([i % num_classes, (i + 3) % num_classes]) for i in range(size)
    ]
    data = build_model(dict(type='MultiLabelDataPreprocessor', num_classes=num_classes))(
        {'inputs': list(inputs), 'data_samples': samples}, training=True
    )
    return data['inputs'], data['data_samples']


def test_an_mmpretrain_loss_plugs_in_through_the_remapping():
    """mmpretrain's CrossEntropyLoss takes (cls_score, label): mapped to logits and gt."""
    model = build_model(
        dict(
            type='ClassifierWithLosses',
            classifier=DIGITS_STUDENT_CFG,
            probe_input_size=(32, 32),
            losses=dict(
                bce=dict(
                    type='CrossEntropyLoss',
                    use_sigmoid=True,
                    loss_weight=2.0,
                    inputs=dict(cls_score='logits', label='gt'),
                )
            ),
        )
    )
    inputs, samples = _batch()
    losses = model.loss(inputs, samples)
    assert set(losses) == {'loss_cls', 'loss_bce'}
    with torch.no_grad():
        logits = model.classifier(inputs, mode='tensor')
    gt = torch.stack([s.gt_score for s in samples])
    expected = 2.0 * F.binary_cross_entropy_with_logits(logits, gt)
    torch.testing.assert_close(losses['loss_bce'], expected)


def test_one_loss_class_serves_two_stages_and_a_list_source():
    model = digits_distiller(
        teacher=DIGITS_STUDENT_CFG,
        student_taps=dict(stage2='backbone.layer2', stage3='backbone.layer3'),
        teacher_taps=dict(stage2='backbone.layer2', stage3='backbone.layer3'),
        distill_losses=dict(
            hint2=dict(type='TestHintLoss', inputs=dict(s_feats='s_stage2', t_feats='t_stage2')),
            hint3=dict(
                type='TestHintLoss',
                loss_weight=3.0,
                inputs=dict(s_feats='s_stage3', t_feats='t_stage3'),
            ),
            stack=dict(type='TestStackLoss', inputs=dict(parts=['s_stage2', 's_stage3'])),
        ),
    )
    inputs, samples = _batch()
    losses = model.loss(inputs, samples)
    with torch.no_grad():
        s2, s3 = model.student.backbone.layer2, model.student.backbone.layer3
        t2, t3 = model.teacher.backbone.layer2, model.teacher.backbone.layer3
        model.student.eval()  # compare the recorded train-mode tensors with a train-mode forward
    feats = {}
    hooks = [
        m.register_forward_hook(lambda mod, a, out, k=k: feats.__setitem__(k, out))
        for k, m in dict(s2=s2, s3=s3, t2=t2, t3=t3).items()
    ]
    model.student.train()
    with torch.no_grad():
        model.teacher(inputs, mode='tensor')
        model.student(inputs, mode='tensor')
    for h in hooks:
        h.remove()
    torch.testing.assert_close(losses['loss_hint2'], (feats['s2'] - feats['t2']).pow(2).mean())
    torch.testing.assert_close(losses['loss_hint3'], 3 * (feats['s3'] - feats['t3']).pow(2).mean())
    torch.testing.assert_close(losses['loss_stack'], feats['s2'].mean() + feats['s3'].mean())
    # Only the consumed taps are recorded during training.
    assert set(model._recorded[('', 's_')]) == {'logits', 'stage2', 'stage3'}


@pytest.mark.parametrize(
    'losses, message',
    [
        (
            dict(cls=dict(type='TestHintLoss', inputs=dict(s_feats='s_feats', t_feats='s_feats'))),
            "'loss_cls', which collides with the task loss",
        ),
        (
            dict(a=dict(type='LabelEmbeddingDistillLoss'), a_cd=dict(type='MultiLabelKDLoss')),
            "'loss_a_cd', which collides with loss 'a'",
        ),
        (
            dict(h=dict(type='TestHintLoss', inputs=dict(s_feat='s_feats'))),
            r"inputs \['s_feat'\] are not arguments of TestHintLoss.forward",
        ),
        (
            dict(h=dict(type='TestHintLoss', inputs=dict(s_feats='s_stage9'))),
            r"needs \['s_stage9'\] for argument 's_feats'.*available: \[",
        ),
        (dict(h=dict(type='NoSuchLoss')), "type 'NoSuchLoss' is not registered"),
    ],
)
def test_bad_loss_configs_fail_at_build_naming_the_culprit(losses, message):
    with pytest.raises((ValueError, KeyError), match=message):
        digits_distiller(
            distill_losses=losses,
            student_taps=dict(label_emb='head'),
            teacher_taps=dict(label_emb='head'),
        )


def test_gather_defaults_to_the_loss_class_and_can_be_overridden():
    model = digits_distiller(
        distill_losses=dict(
            ndd=dict(type='NegativeDiscrepancyLoss'),
            kd=dict(type='MultiLabelKDLoss'),
            ndd_local=dict(type='NegativeDiscrepancyLoss', gather=False),
        )
    )
    assert model.distill_losses.gathers == dict(ndd=True, kd=False, ndd_local=False)


def test_single_network_losses_read_sample_idx_and_gt_full():
    seen = {}

    @MODELS.register_module(name='TestRecordLoss', force=True)
    class TestRecordLoss(torch.nn.Module):
        def forward(self, logits, sample_idx, gt_full):
            seen.update(sample_idx=sample_idx, gt_full=gt_full)
            return logits.sum() * 0

    model = build_model(
        dict(
            type='ClassifierWithLosses',
            classifier=DIGITS_STUDENT_CFG,
            losses=dict(rec=dict(type='TestRecordLoss')),
        )
    )
    inputs, samples = _batch(3)
    for i, s in enumerate(samples):
        s.set_metainfo(dict(sample_idx=10 + i))
    model.loss(inputs, samples)
    assert seen['sample_idx'].tolist() == [10, 11, 12]
    torch.testing.assert_close(seen['gt_full'], torch.stack([s.gt_score for s in samples]))


def test_a_second_view_reaches_the_losses_under_its_prefix():
    """ClassifierWithLosses(views=...): the anchor view gives the task loss and the plain names,
    the positive view runs through the same network and is supplied as positive_<tap>; the
    intra-class loss is sized from the probed positive/anchor embeddings."""
    model = build_model(
        dict(
            type='ClassifierWithLosses',
            classifier=DIGITS_STUDENT_CFG,
            probe_input_size=(32, 32),
            views=dict(anchor=0, positive=1),
            losses=dict(
                intra=dict(
                    type='IntraClassContrastiveLoss',
                    queue_size=4,
                    margin_threshold=-1.0,
                    inputs=dict(anchor='pooled', positive='positive_pooled'),
                )
            ),
        )
    )
    pooled_dim = model.losses['intra'].queue_anchor.shape[-1]
    anchor, _ = _batch(4, seed=0)
    positive, _ = _batch(4, seed=1)
    samples = [
        DataSample().set_gt_label([i]).set_gt_score(F.one_hot(torch.tensor(i), 10).float())
        for i in (0, 0, 1, 1)
    ]
    losses = model.loss([anchor, positive], samples)
    assert set(losses) == {'loss_cls', 'loss_intra'}
    assert model.losses['intra'].queue_count[:2].tolist() == [2, 2]
    cached = model.losses['intra'].queue_anchor[0, :2]
    with torch.no_grad():
        model.eval()
        feats = model.classifier.neck(model.classifier.backbone(anchor))
        model.train()
    feats = feats[-1] if isinstance(feats, tuple) else feats
    assert cached.shape[-1] == pooled_dim
    torch.testing.assert_close(cached.shape, feats[:2].shape)
    predictions = model([anchor, positive], samples, mode='predict')  # the main view
    assert len(predictions) == 4
    with pytest.raises(ValueError, match="view 'positive' is configured"):
        model.loss(anchor, samples)


def test_a_connector_listed_before_the_connector_it_reads_still_builds():
    """mmengine dumps a config's dicts in alphabetical order, so a work dir's ReviewKD config
    listed its fusion ``s_abf`` before the ``s_pool`` it reads, and did not build again."""
    connectors = dict(
        a_outer=dict(type='GlobalPoolConnector', keepdim=True, source='z_inner'),
        z_inner=dict(type='GlobalPoolConnector', keepdim=True, source='s_stage3'),
    )
    model = digits_distiller(
        student_taps=dict(stage3='backbone.layer3'),
        teacher_taps=dict(stage3='backbone.layer3'),
        connectors=connectors,
        distill_losses=dict(stack=dict(type='TestStackLoss', inputs=dict(parts=['a_outer']))),
    )
    inputs, samples = _batch()
    losses = model.loss(inputs, samples)
    feats = {}
    hook = model.student.backbone.layer3.register_forward_hook(
        lambda mod, args, out: feats.__setitem__('stage3', out)
    )
    with torch.no_grad():  # train mode, as the loss saw it: batch statistics
        model.student(inputs, mode='tensor')
    hook.remove()
    torch.testing.assert_close(losses['loss_stack'], feats['stage3'].mean())
    # A source that no connector makes is still named.
    with pytest.raises(ValueError, match=r"connectors.a_outer: source \['nowhere'\]"):
        digits_distiller(
            student_taps=dict(stage3='backbone.layer3'),
            teacher_taps=dict(stage3='backbone.layer3'),
            connectors=dict(connectors, a_outer=dict(connectors['a_outer'], source='nowhere')),
            distill_losses=dict(stack=dict(type='TestStackLoss', inputs=dict(parts=['a_outer']))),
        )


def test_connectors_already_in_reading_order_keep_their_order():
    """The build order is the order the connectors draw their initial weights in."""
    from mlkd.models.algorithms.routing import _reading_order

    cfgs = dict(
        a=dict(source='s_x'), b=dict(source='a'), c=dict(source='s_x'), d=dict(source=['c', 'b'])
    )
    assert [name for name, _ in _reading_order(cfgs, {'s_x'})] == ['a', 'b', 'c', 'd']
    backwards = dict(reversed(list(cfgs.items())))  # d, c, b, a
    assert [name for name, _ in _reading_order(backwards, {'s_x'})] == ['c', 'a', 'b', 'd']
    # Unsatisfiable configs come last, in order, for the build to name what they miss.
    assert [n for n, _ in _reading_order(dict(z=dict(source='nowhere'), a=cfgs['a']), {'s_x'})] == [
        'a',
        'z',
    ]
