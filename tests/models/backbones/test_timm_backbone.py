"""TimmBackbone: the maps timm itself computes, weights from local files only, bad input refused.

Each network is a tiny timm classifier with random weights, saved to a file and loaded both ways:
into mlkd's backbone (``weights=``, read by ``init_weights``) and into the timm model by timm's own
loader (``timm.models.load_checkpoint``). Nothing is downloaded: ``pretrained`` stays False.
"""

import pytest
import torch
from conftest import build_model
from safetensors.torch import save_file
from timm import create_model
from timm.models import FeatureListNet, load_checkpoint

from mlkd.models.algorithms.taps import Taps
from mlkd.models.backbones import TimmBackbone
from mlkd.models.backbones import timm_backbone as timm_backbone_module

RESNET = ('resnet18', dict(channels=(8, 16, 32, 64)))
VIT = ('vit_tiny_patch16_224', dict(img_size=32, patch_size=8, depth=4, embed_dim=32, num_heads=2))


def timm_classifier_file(tmp_path, name, kwargs, suffix, seed=0, num_classes=5):
    """A timm classifier with random weights and the file its state dict was saved to."""
    torch.manual_seed(seed)
    net = create_model(name, pretrained=False, num_classes=num_classes, **kwargs).eval()
    path = str(tmp_path / f'{name}{suffix}')
    if suffix == '.safetensors':
        save_file(net.state_dict(), path)
    else:
        torch.save(net.state_dict(), path)
    return net, path


def loaded_backbone(name, kwargs, path, **extra):
    backbone = TimmBackbone(name, weights=path, **kwargs, **extra)
    backbone.init_weights()
    return backbone.eval()


def test_cnn_feature_maps_equal_timm_features_only(tmp_path):
    name, kwargs = RESNET
    _, path = timm_classifier_file(tmp_path, name, kwargs, '.safetensors')
    backbone = loaded_backbone(name, kwargs, path, out_indices=(1, 2, 3, 4))
    # timm directly: its own loader, its features_only extractor (modules run one after another).
    direct = create_model(name, pretrained=False, num_classes=5, **kwargs)
    load_checkpoint(direct, path, strict=True)
    reference = FeatureListNet(direct.eval(), out_indices=(1, 2, 3, 4))
    x = torch.randn(2, 3, 32, 32)
    maps = backbone(x)
    expected = reference(x)
    assert [tuple(m.shape) for m in maps] == [
        (2, 8, 8, 8),
        (2, 16, 4, 4),
        (2, 32, 2, 2),
        (2, 64, 1, 1),
    ]
    assert backbone.out_channels == [8, 16, 32, 64]
    for got, want in zip(maps, expected):
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    # The taps: each stage map at backbone.feature_maps.<k>, and timm's own module paths.
    with Taps(backbone, {'s2': 'feature_maps.1', 'layer3': 'model.layer3'}) as taps:
        backbone(x)
    torch.testing.assert_close(taps.values()['s2'], expected[1], rtol=0, atol=0)
    torch.testing.assert_close(taps.values()['layer3'], expected[2], rtol=0, atol=0)


def test_vit_feature_maps_equal_timm_blocks(tmp_path):
    name, kwargs = VIT
    net, path = timm_classifier_file(tmp_path, name, kwargs, '.pth')
    backbone = loaded_backbone(name, kwargs, path, out_indices=(0, 2))
    direct = create_model(name, pretrained=False, num_classes=5, **kwargs)
    load_checkpoint(direct, path, strict=True)
    x = torch.randn(2, 3, 32, 32)
    maps = backbone(x)
    expected = direct.eval().forward_intermediates(x, indices=[0, 2], intermediates_only=True)
    for got, want in zip(maps, expected):
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    # Independently of forward_intermediates: block outputs of the full classifier's forward,
    # class token dropped, the 4x4 patch tokens laid out as a map.
    blocks = []
    hooks = [
        direct.blocks[i].register_forward_hook(lambda m, a, o: blocks.append(o)) for i in (0, 2)
    ]
    logits = direct(x)
    for hook in hooks:
        hook.remove()
    for got, tokens in zip(maps, blocks):
        assert tuple(got.shape) == (2, 32, 4, 4)
        torch.testing.assert_close(got, tokens[:, 1:].transpose(1, 2).reshape(2, 32, 4, 4))
    torch.testing.assert_close(logits, net(x))  # the file holds the classifier that was saved
    # The final norm, the classifier and the blocks after the last stage are pruned, and were
    # left out of the strict load: no parameter goes unused in training.
    assert not any(
        k.startswith(('norm.', 'head.', 'blocks.3.')) for k in backbone.model.state_dict()
    )
    assert len(backbone.model.blocks) == 3


def test_init_weights_leaves_timms_initialisation(tmp_path):
    """mmengine would call timm's own init_weights and re-draw a ViT: TimmBackbone does not."""
    name, kwargs = VIT
    backbone = TimmBackbone(name, **kwargs)
    before = {k: v.clone() for k, v in backbone.state_dict().items()}
    backbone.init_weights()
    for key, value in backbone.state_dict().items():
        assert torch.equal(value, before[key]), key


def test_timm_is_never_asked_to_download(tmp_path):
    with pytest.raises(ValueError, match=r'pretrained.*weights=PATH'):
        TimmBackbone('resnet18', pretrained=True)


def test_a_hub_id_is_fetched_as_a_file_then_loaded_strictly(tmp_path, monkeypatch):
    name, kwargs = RESNET
    net, path = timm_classifier_file(tmp_path, name, kwargs, '.safetensors')
    asked = []

    def fake_download(repo_id):
        asked.append(repo_id)
        return path

    monkeypatch.setattr(timm_backbone_module, 'hub_weights_file', fake_download)
    backbone = TimmBackbone(name, weights='hf-hub:timm/resnet18.a1_in1k', **kwargs)
    assert asked == []  # building reads nothing: a distiller's teacher is never initialised
    backbone.init_weights()
    assert asked == ['timm/resnet18.a1_in1k']
    torch.testing.assert_close(backbone.model.conv1.weight, net.conv1.weight, rtol=0, atol=0)


def test_an_unknown_timm_name_is_refused_with_close_names():
    with pytest.raises(KeyError, match=r"'resnet1B' is not a timm model.*'resnet18'"):
        TimmBackbone('resnet1B')


def test_weights_of_another_architecture_are_refused_naming_keys(tmp_path):
    _, vit_file = timm_classifier_file(tmp_path, *VIT, '.safetensors')
    name, kwargs = RESNET
    backbone = TimmBackbone(name, weights=vit_file, **kwargs)
    with pytest.raises(ValueError, match='does not fit') as error:
        backbone.init_weights()
    message = str(error.value)
    assert vit_file in message and "TimmBackbone('resnet18')" in message
    assert 'missing keys' in message and 'conv1.weight' in message
    assert 'unexpected keys' in message and 'blocks.0.attn.qkv.weight' in message
    # A file of the same architecture with other widths: the shapes are named.
    _, wide = timm_classifier_file(tmp_path, name, dict(kwargs, channels=(8, 16, 32, 128)), '.pth')
    with pytest.raises(ValueError, match=r'shape mismatches.*layer4\.0\.conv1\.weight'):
        TimmBackbone(name, weights=wide, **kwargs).init_weights()
    with pytest.raises(FileNotFoundError, match='no_such.safetensors'):
        TimmBackbone(name, weights=str(tmp_path / 'no_such.safetensors'), **kwargs).init_weights()


def test_out_indices_out_of_range_are_refused():
    name, kwargs = RESNET
    with pytest.raises(ValueError, match=r"out index 5 is out of range.*'layer4'"):
        TimmBackbone(name, out_indices=(1, 5), **kwargs)


def test_a_linear_head_on_a_timm_backbone_reads_its_last_map():
    """mmpretrain's ImageClassifier over TimmBackbone: GAP of the last map, then the linear head."""

    import mlkd

    name, kwargs = RESNET
    mlkd.register_all_modules()
    classifier = build_model(
        dict(
            type='ImageClassifier',
            backbone=dict(type='TimmBackbone', model_name=name, **kwargs),
            neck=dict(type='GlobalAveragePooling'),
            head=dict(type='MultiLabelLinearClsHead', num_classes=5, in_channels=64),
        )
    ).eval()
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        pooled = classifier.backbone(x)[-1].mean(dim=(2, 3))
        expected = pooled @ classifier.head.fc.weight.T + classifier.head.fc.bias
        torch.testing.assert_close(classifier(x, mode='tensor'), expected)
