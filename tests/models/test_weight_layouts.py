"""Whole classifiers from elsewhere as teachers: a torchvision ResNet state dict mapped onto
mmpretrain's ResNet (equal outputs), plain and safetensors files, and misfits named key by key."""

import pytest
import torch
import torchvision
from conftest import build_model, cheap_default_init
from safetensors.torch import save_file

import mlkd
from mlkd.models.weight_layouts import torchvision_resnet
from mlkd.models.weights import load_network_checkpoint


def mmpretrain_resnet18(num_classes: int = 10):
    """mmpretrain's ResNet-18 classifier, the architecture of torchvision's resnet18."""
    mlkd.register_all_modules()
    with cheap_default_init():
        return build_model(
            dict(
                type='ImageClassifier',
                backbone=dict(type='ResNet', depth=18, out_indices=(3,), style='pytorch'),
                neck=dict(type='GlobalAveragePooling'),
                head=dict(type='MultiLabelLinearClsHead', num_classes=num_classes, in_channels=512),
            )
        )


@pytest.fixture(scope='module')
def torchvision_file(tmp_path_factory):
    """torchvision's resnet18 (10 outputs), random weights and BN statistics, saved to a file."""
    torch.manual_seed(0)
    net = torchvision.models.resnet18(num_classes=10)
    with torch.no_grad():
        for module in net.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 2.0)
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.2, 0.2)
    path = str(tmp_path_factory.mktemp('torchvision') / 'resnet18.pth')
    torch.save(net.state_dict(), path)
    return net.eval(), path


def test_torchvision_resnet_gives_the_same_outputs_in_mmpretrain(torchvision_file):
    net, path = torchvision_file
    teacher = mmpretrain_resnet18()
    load_network_checkpoint(teacher, dict(path=path, layout='torchvision_resnet'), 'teacher')
    x = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        torch.testing.assert_close(teacher.eval()(x, mode='tensor'), net(x))
        # The stages too: mmpretrain's layer3 is torchvision's layer3.
        features = []
        hook = net.layer3.register_forward_hook(lambda m, a, o: features.append(o))
        net(x)
        hook.remove()
        stem = teacher.backbone.maxpool(
            teacher.backbone.relu(teacher.backbone.bn1(teacher.backbone.conv1(x)))
        )
        out = teacher.backbone.layer3(teacher.backbone.layer2(teacher.backbone.layer1(stem)))
        torch.testing.assert_close(out, features[0])


def test_the_layout_is_a_renaming_only(torchvision_file):
    _, path = torchvision_file
    state = torch.load(path, weights_only=True)
    mapped = torchvision_resnet(state)
    assert list(mapped.values()) == list(state.values())
    assert 'backbone.layer1.0.downsample' not in ' '.join(mapped)  # resnet18's layer1 keeps size
    assert {'head.fc.weight', 'backbone.layer2.0.downsample.1.running_var'} <= set(mapped)


def test_a_torchvision_file_without_its_layout_is_refused_with_a_hint(torchvision_file):
    _, path = torchvision_file
    with pytest.raises(ValueError) as error:
        load_network_checkpoint(mmpretrain_resnet18(), path, 'teacher')
    message = str(error.value)
    assert path in message and 'teacher' in message
    assert "missing keys: ['backbone.conv1.weight'" in message
    assert "unexpected keys: ['conv1.weight'" in message
    assert "layout='torchvision_resnet'" in message


def test_a_whole_classifier_as_safetensors_loads_strictly(tmp_path):
    source = mmpretrain_resnet18()
    path = str(tmp_path / 'teacher.safetensors')
    save_file(source.state_dict(), path)
    teacher = mmpretrain_resnet18()
    load_network_checkpoint(teacher, path, 'teacher')
    for key, value in source.state_dict().items():
        assert torch.equal(teacher.state_dict()[key], value), key


def test_a_classifier_that_does_not_fit_is_named_key_by_key(torchvision_file, tmp_path):
    _, path = torchvision_file
    # Another architecture: a torchvision ResNet with one block per stage lacks resnet18's second.
    other = str(tmp_path / 'resnet10.pth')
    with cheap_default_init():
        net = torchvision.models.ResNet(torchvision.models.resnet.BasicBlock, [1, 1, 1, 1])
    torch.save(net.state_dict(), other)
    with pytest.raises(ValueError, match=r"missing keys: \['backbone\.layer1\.1\.conv1\.weight'"):
        load_network_checkpoint(
            mmpretrain_resnet18(), dict(path=other, layout='torchvision_resnet'), 'teacher'
        )
    # Another label set: the head's shapes are named.
    with pytest.raises(ValueError, match=r'shape mismatches.*head\.fc\.weight.*\(10, 512\).*\(80'):
        load_network_checkpoint(
            mmpretrain_resnet18(80), dict(path=path, layout='torchvision_resnet'), 'teacher'
        )
    with pytest.raises(KeyError, match=r"unknown layout 'torchvison'.*torchvision_resnet"):
        load_network_checkpoint(mmpretrain_resnet18(), dict(path=path, layout='torchvison'), 't')
    with pytest.raises(ValueError, match='takes path= and layout='):
        load_network_checkpoint(mmpretrain_resnet18(), dict(file=path), 'teacher')
