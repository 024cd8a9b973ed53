"""Tests of the ML-Decoder label-wise embedding head."""

import inspect

import pytest
import torch
import torch.nn.functional as F
from conftest import build_model
from mmpretrain.models import ImageClassifier
from mmpretrain.structures import DataSample

from mlkd.models.heads import MLDecoderHead

C, F_IN, D = 10, 32, 16


def _head(**kwargs):
    cfg = dict(num_classes=C, in_channels=F_IN, hidden_dim=D, num_heads=4, ffn_dim=24)
    cfg.update(kwargs)
    return MLDecoderHead(**cfg)


@pytest.mark.parametrize('shape', [(3, F_IN, 2, 3), (3, 5, F_IN), (3, F_IN)])
def test_output_shapes(shape):
    head = _head().eval()
    feats = (torch.randn(2, 7), torch.randn(*shape))  # only the last stage is used
    assert head(feats).shape == (3, C)
    assert head.pre_logits(feats).shape == (3, C, D)


def test_hook_on_decoder_records_embeddings():
    head = _head().eval()
    recorded = []
    handle = head.decoder.register_forward_hook(lambda m, i, o: recorded.append(o))
    feats = (torch.randn(4, F_IN, 3, 3),)
    logits = head(feats)
    handle.remove()
    assert len(recorded) == 1 and recorded[0].shape == (4, C, D)
    torch.testing.assert_close(head.group_fc(recorded[0]), logits)


def test_query_modes():
    frozen = _head(query_mode='frozen_random')
    assert not frozen.decoder.query.requires_grad
    assert 'decoder.query' in frozen.state_dict()
    assert frozen.decoder.query.shape == (C, D)
    learn = _head()
    assert learn.decoder.query.requires_grad
    frozen.train()
    frozen((torch.randn(2, F_IN, 2, 2),)).sum().backward()
    assert frozen.decoder.query.grad is None
    assert frozen.group_fc.weight.grad is not None
    with pytest.raises(ValueError):
        _head(query_mode='foo')


def test_group_fc_equals_per_class_loop():
    head = _head()
    torch.nn.init.normal_(head.group_fc.bias)
    emb = torch.randn(3, C, D)
    ref = torch.stack(
        [emb[:, c] @ head.group_fc.weight[c] + head.group_fc.bias[c] for c in range(C)], dim=1
    )
    torch.testing.assert_close(head.group_fc(emb), ref)
    # Xavier-normal init scale and zero bias at construction.
    fresh = MLDecoderHead(num_classes=80, in_channels=8, hidden_dim=768, ffn_dim=8)
    assert fresh.group_fc.bias.abs().sum() == 0
    std = fresh.group_fc.weight.std().item()
    assert abs(std - (2 / (768 + 80)) ** 0.5) < 0.005


def test_decoder_layer_matches_formula_in_eval():
    head = _head().eval()
    dec = head.decoder
    mem = torch.randn(2, 5, D)
    q = dec.query.unsqueeze(0).expand(2, -1, -1)
    t = dec.norm1(2 * q)
    a = dec.cross_attn(t, mem, mem)[0]
    t = dec.norm2(t + a)
    t = dec.norm3(t + dec.linear2(torch.relu(dec.linear1(t))))
    torch.testing.assert_close(dec(mem), t, rtol=1e-5, atol=1e-5)


def test_inside_image_classifier():
    model = build_model(
        dict(
            type='ImageClassifier',
            backbone=dict(type='ResNet', depth=18),
            neck=None,
            head=dict(
                type='MLDecoderHead',
                num_classes=C,
                in_channels=512,
                hidden_dim=32,
                num_heads=4,
                ffn_dim=64,
                query_mode='frozen_random',
            ),
        )
    )
    assert isinstance(model, ImageClassifier) and isinstance(model.head, MLDecoderHead)
    model.init_weights()
    assert not model.head.decoder.query.requires_grad
    x = torch.randn(2, 3, 64, 64)
    samples = [DataSample().set_gt_label([1, 3]), DataSample().set_gt_label([0])]

    model.train()
    losses = model(x, samples, mode='loss')
    assert set(losses) == {'loss'} and torch.isfinite(losses['loss'])
    losses['loss'].backward()
    assert model.head.group_fc.weight.grad is not None

    model.eval()
    with torch.no_grad():
        recorded = []
        handle = model.head.decoder.register_forward_hook(lambda m, i, o: recorded.append(o))
        logits = model(x, mode='tensor')
        handle.remove()
        assert logits.shape == (2, C) and recorded[0].shape == (2, C, 32)
        assert model.extract_feat(x, stage='pre_logits').shape == (2, C, 32)
        preds = model(x, [DataSample(), DataSample()], mode='predict')
    assert len(preds) == 2 and preds[0].pred_score.shape == (C,)
    torch.testing.assert_close(preds[0].pred_score, torch.sigmoid(logits[0]))


def test_default_loss_skips_ignored_labels_and_is_not_a_shared_dict():
    """The default task loss is BCE summed over the known entries (L2D's, which every shipped
    ML-Decoder config names). mmpretrain's ``CrossEntropyLoss(use_sigmoid=True)``, the former
    default, read a -1 (ignored) target as a label: its loss there fell without bound as the
    logit grew. The default is ``None``, not a dict shared by every call."""
    assert inspect.signature(MLDecoderHead).parameters['loss'].default is None
    head = _head().eval()
    feats = (torch.randn(2, F_IN, 2, 2),)
    gt = torch.zeros(2, C)
    gt[0, [0, 4]] = 1
    gt[1, 1] = 1
    gt[:, 2] = -1  # class 2 unknown in both images
    gt[1, 7] = -1
    samples = [DataSample().set_gt_score(row) for row in gt]
    known = gt >= 0
    losses = []
    for shift in (0.0, 50.0):  # the ignored class's logit moves; the loss must not
        with torch.no_grad():
            head.group_fc.bias[2] = shift
        logits = head(feats)
        expected = F.binary_cross_entropy_with_logits(logits[known], gt[known], reduction='sum')
        losses.append(head.loss(feats, samples)['loss'])
        torch.testing.assert_close(losses[-1], expected)
    torch.testing.assert_close(losses[0], losses[1])
    head.loss(feats, samples)['loss'].backward()
    assert head.group_fc.bias.grad[2] == 0 and head.group_fc.bias.grad[0] != 0
