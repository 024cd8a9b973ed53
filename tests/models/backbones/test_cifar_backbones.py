"""CIFAR-layout backbones (CRD / mdistiller layouts): shapes, parameter counts, configs, taps.

Reference parameter counts (``REFERENCE_PARAMS``) are exact: they were obtained by instantiating the
models of ``megvii-research/mdistiller`` @ a08d46f (``mdistiller/models/cifar``) and of CRD's
``HobbitLong/RepDistiller`` @ b84f547 (``models``) with ``num_classes=100`` and summing ``p.numel()``
over the whole model (backbone + 100-way linear classifier); both repositories give the same count
for every net (table in ``docs/model_zoo.md``). The rounded values (``PUBLISHED_M``) are the figures
commonly quoted for these nets; no paper table was located to cite for them, so the exact counts
are the authority and the rounded ones are only checked to agree within 1%.
Equality with the reference implementation (its state dict loaded strictly, stem, stage and
pre-activation taps bit-identical, logits equal up to float rounding) was checked outside the test
suite, which cannot import third-party model code.
"""

import glob
import os.path as osp

import pytest
import torch
from conftest import build_model, cheap_default_init, config_path
from mmengine.config import Config

import mlkd
import mlkd.models.backbones  # noqa: F401  (registers the classes before mlkd.models exports them)
from mlkd.models.algorithms.taps import Taps
from mlkd.models.backbones import (
    CifarFourStageResNet,
    CifarMobileNetV2,
    CifarResNet,
    CifarVGG,
    WideResNet,
)

try:  # may fail while other modules of the package are being written
    mlkd.register_all_modules()
except Exception:  # pragma: no cover
    pass


def _stages(width: int, count: int) -> list[tuple[int, int, int]]:
    """Stage outputs [C, H, W] of a CIFAR ResNet / WRN for a 32x32 input: the first stage
    ``width`` x 32 x 32, then each stage doubling the channels and halving the side."""
    return [(width * 2**k, 32 // 2**k, 32 // 2**k) for k in range(count)]


# name -> (backbone cfg, stage output shapes [C, H, W] for a 32x32 input)
NETS = {
    **{
        f'resnet{d}': (dict(type='CifarResNet', depth=d), _stages(16, 3))
        for d in (8, 14, 20, 32, 44, 56, 110)
    },
    **{
        f'resnet{d}x4': (dict(type='CifarResNet', depth=d, width_multiplier=4), _stages(64, 3))
        for d in (8, 32)
    },
    **{
        f'wrn_{d}_{k}': (dict(type='WideResNet', depth=d, widen_factor=k), _stages(16 * k, 3))
        for d in (16, 40)
        for k in (1, 2)
    },
    **{
        f'vgg{d}': (
            dict(type='CifarVGG', depth=d),
            [(64, 32, 32), (128, 16, 16), (256, 8, 8), (512, 4, 4), (512, 4, 4)],
        )
        for d in (8, 11, 13, 16, 19)
    },
    'ResNet18': (dict(type='CifarFourStageResNet', depth=18), _stages(64, 4)),
    'ResNet34': (dict(type='CifarFourStageResNet', depth=34), _stages(64, 4)),
    'ResNet50': (dict(type='CifarFourStageResNet', depth=50), _stages(256, 4)),
    'mobilenetv2': (
        dict(type='CifarMobileNetV2'),
        [
            (8, 16, 16),
            (12, 16, 16),
            (16, 8, 8),
            (32, 4, 4),
            (48, 4, 4),
            (80, 2, 2),
            (160, 2, 2),
            (1280, 2, 2),
        ],
    ),
    'shufflev1': (dict(type='CifarShuffleNetV1'), [(240, 16, 16), (480, 8, 8), (960, 4, 4)]),
    'shufflev2': (
        dict(type='CifarShuffleNetV2'),
        [(116, 16, 16), (232, 8, 8), (464, 4, 4), (1024, 4, 4)],
    ),
}

# Exact counts of mdistiller @ a08d46f with a 100-class linear classifier (module doc).
REFERENCE_PARAMS = {
    'resnet8': 83_892,
    'resnet14': 181_108,
    'resnet20': 278_324,
    'resnet32': 472_756,
    'resnet44': 667_188,
    'resnet56': 861_620,
    'resnet110': 1_736_564,
    'resnet8x4': 1_233_540,
    'resnet32x4': 7_433_860,
    'wrn_16_1': 180_916,
    'wrn_16_2': 703_284,
    'wrn_40_1': 569_780,
    'wrn_40_2': 2_255_156,
    'vgg8': 3_965_028,
    'vgg11': 9_277_284,
    'vgg13': 9_462_180,
    'vgg16': 14_774_436,
    'vgg19': 20_086_692,  # the vgg*_bn models (CRD's "vgg8"/"vgg13" are the BN versions)
    'mobilenetv2': 812_836,  # mobile_half = MobileNetV2(T=6, width 0.5)
    'shufflev1': 949_258,
    'shufflev2': 1_355_528,
    # resnetv2.py (the same file in both repositories)
    'ResNet18': 11_220_132,
    'ResNet34': 21_328_292,
    'ResNet50': 23_705_252,
}
# Rounded figures quoted in CIFAR-100 distillation papers, in millions.
PUBLISHED_M = {
    'resnet20': 0.28,
    'resnet56': 0.86,
    'resnet110': 1.74,
    'resnet32x4': 7.43,
    'resnet8x4': 1.23,
    'wrn_16_2': 0.70,
    'wrn_40_2': 2.26,
    'wrn_40_1': 0.57,
    'vgg8': 3.96,
    'vgg13': 9.46,
    'mobilenetv2': 0.81,
    'shufflev1': 0.95,
    'shufflev2': 1.36,
}

# Stem tap shapes [C, H, W] for a 32x32 input, by family (name prefix).
STEM_SHAPES = {
    'resnet8x4': (32, 32, 32),
    'resnet32x4': (32, 32, 32),
    'resnet': (16, 32, 32),
    'ResNet': (64, 32, 32),
    'wrn': (16, 32, 32),
    'vgg': (64, 32, 32),
    'mobilenetv2': (16, 16, 16),
    'shufflev': (24, 32, 32),
}

CONFIG_FILES = sorted(glob.glob(config_path('_base_', 'models', 'cifar', '*.py')))


def _build(cfg: dict):
    """Build ``cfg``; default weights from :func:`conftest.cheap_default_init` (shapes, counts,
    taps and signs are what these tests read; the reference init scheme is tested on its own)."""
    with cheap_default_init():
        return build_model(cfg)


def _classifier(name: str, num_classes: int = 100):
    backbone, shapes = NETS[name]
    return _build(
        dict(
            type='ImageClassifier',
            backbone=backbone,
            neck=dict(type='GlobalAveragePooling'),
            head=dict(
                type='MultiLabelLinearClsHead',
                num_classes=num_classes,
                in_channels=shapes[-1][0],
                loss=dict(type='BinaryCrossEntropySumLoss'),
            ),
        )
    )


@pytest.mark.parametrize('name', sorted(NETS))
def test_stage_shapes(name):
    backbone_cfg, shapes = NETS[name]
    net = _build(dict(backbone_cfg, out_indices=tuple(range(len(shapes))))).eval()
    with torch.no_grad():
        outs = net(torch.randn(2, 3, 32, 32))
    assert isinstance(outs, tuple)
    assert [tuple(o.shape) for o in outs] == [(2,) + s for s in shapes]
    assert all(torch.isfinite(o).all() for o in outs)
    default = _build(backbone_cfg).eval()  # out_indices=(-1,): the last stage only
    with torch.no_grad():
        (last,) = default(torch.randn(2, 3, 32, 32))
    assert tuple(last.shape) == (2,) + shapes[-1]
    assert tuple(net.stage_channels) == tuple(s[0] for s in shapes)


@pytest.mark.parametrize('name', sorted(REFERENCE_PARAMS))
def test_parameter_counts_match_the_reference(name):
    count = sum(p.numel() for p in _classifier(name, 100).parameters())
    assert count == REFERENCE_PARAMS[name]
    if name in PUBLISHED_M:
        assert abs(count / 1e6 - PUBLISHED_M[name]) <= 0.01 * PUBLISHED_M[name]


# The eight networks of "Enriching Knowledge Distillation with Intra-Class Contrastive Learning"
# (anonymous ICLR submission), Tables 1-3: name -> (model-zoo config, last-stage map side for a
# 32x32 and a 64x64 input, exact reference parameter counts with a 10 / 100 / 200-class linear
# classifier = CIFAR-10 / CIFAR-100 / Tiny ImageNet). Counts obtained by instantiating
# mdistiller @ a08d46f and RepDistiller @ b84f547 (identical in both; docs/model_zoo.md).
PAPER_NETS = {
    'ResNet50': ('resnet50', 4, 8, (23_520_842, 23_705_252, 23_910_152)),
    'ResNet34': ('resnet34', 4, 8, (21_282_122, 21_328_292, 21_379_592)),
    'wrn_40_2': ('wrn_40_2', 8, 16, (2_243_546, 2_255_156, 2_268_056)),
    'wrn_16_2': ('wrn_16_2', 8, 16, (691_674, 703_284, 716_184)),
    'vgg13': ('vgg13', 4, 4, (9_416_010, 9_462_180, 9_513_480)),
    'vgg8': ('vgg8', 4, 4, (3_918_858, 3_965_028, 4_016_328)),
    'mobilenetv2': ('mobilenetv2', 2, 4, (697_546, 812_836, 940_936)),
    'shufflev2': ('shufflev2', 4, 8, (1_263_278, 1_355_528, 1_458_028)),
}
DATASET_HEADS = {'CIFAR-10': 10, 'CIFAR-100': 100, 'Tiny ImageNet': 200}


def _single_label_classifier(config_name: str, num_classes: int):
    """The model-zoo config with the single-label head the paper's leaves use."""
    cfg = Config.fromfile(config_path('_base_', 'models', 'cifar', f'{config_name}.py'))
    cfg.model.head = dict(
        type='LinearClsHead',
        num_classes=num_classes,
        in_channels=cfg.model.head.in_channels,
        loss=dict(type='CrossEntropyLoss'),
    )
    return _build(cfg.model)


@pytest.mark.parametrize('dataset', sorted(DATASET_HEADS))
@pytest.mark.parametrize('name', sorted(PAPER_NETS))
def test_paper_nets_match_the_reference_counts_for_each_dataset_head(name, dataset):
    config_name, _, _, counts = PAPER_NETS[name]
    num_classes = DATASET_HEADS[dataset]
    model = _single_label_classifier(config_name, num_classes)
    expected = counts[sorted(DATASET_HEADS.values()).index(num_classes)]
    assert sum(p.numel() for p in model.parameters()) == expected


@pytest.mark.parametrize('name', sorted(PAPER_NETS))
def test_paper_nets_last_map_and_logits_at_cifar_and_tiny_imagenet_sizes(name):
    config_name, side32, side64, _ = PAPER_NETS[name]
    model = _single_label_classifier(config_name, 200).eval()
    for size, side in ((32, side32), (64, side64)):
        with torch.no_grad():
            (last,) = model.backbone(torch.randn(2, 3, size, size))
            logits = model(torch.randn(2, 3, size, size), mode='tensor')
        assert tuple(last.shape[2:]) == (side, side), (size, last.shape)
        assert side >= 2  # the paper's nets keep a spatial map on CIFAR
        assert logits.shape == (2, 200) and torch.isfinite(logits).all()


@pytest.mark.parametrize('depth', [34, 50])
def test_four_stage_resnet_agrees_with_mmpretrain_resnet_cifar(depth):
    """An independent implementation of the same layout: equal parameter count and shapes."""
    from mmpretrain.models.backbones import ResNet_CIFAR

    ours = CifarFourStageResNet(depth, out_indices=(0, 1, 2, 3)).eval()
    theirs = ResNet_CIFAR(depth=depth, out_indices=(0, 1, 2, 3))
    theirs.eval()  # mmpretrain's ResNet.train() returns None
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in theirs.parameters())
    x = torch.randn(1, 3, 32, 32)
    with torch.no_grad():
        assert [o.shape for o in ours(x)] == [o.shape for o in theirs(x)]


def test_four_stage_resnet_keys_and_validation():
    keys = set(CifarFourStageResNet(50).state_dict())
    assert {
        'conv1.weight',
        'bn1.running_mean',
        'layer1.0.conv3.weight',
        'layer1.0.bn3.weight',
        'layer1.0.shortcut.0.weight',
        'layer4.0.shortcut.1.running_var',
        'layer4.2.conv3.weight',
    } <= keys
    assert 'layer1.1.shortcut.0.weight' not in keys
    keys = set(CifarFourStageResNet(34).state_dict())
    assert {'layer2.0.shortcut.0.weight', 'layer3.5.bn2.weight', 'layer4.2.conv2.weight'} <= keys
    assert not any(k.startswith('layer1.0.shortcut') or 'downsample' in k for k in keys)
    assert CifarFourStageResNet(34).bn_before_relu_paths()[-1] == 'layer4.2.bn2'
    assert CifarFourStageResNet(50).preact_paths() == [
        'layer1.2.preact',
        'layer2.3.preact',
        'layer3.5.preact',
        'layer4.2.preact',
    ]
    with pytest.raises(ValueError, match='depth must be one of'):
        CifarFourStageResNet(depth=20)
    with pytest.raises(ValueError, match='out index 4'):
        CifarFourStageResNet(depth=18, out_indices=(4,))
    from mlkd.models.backbones import CifarBasicBlock

    with pytest.raises(ValueError, match='shortcut_name'):
        CifarBasicBlock(8, 16, 2, shortcut_name='proj')


def test_the_requested_configs_exist():
    names = {osp.basename(f)[:-3] for f in CONFIG_FILES}
    assert {
        'resnet20',
        'resnet56',
        'resnet110',
        'resnet32x4',
        'resnet8x4',
        'wrn_16_2',
        'wrn_40_2',
        'wrn_40_1',
        'vgg8',
        'vgg13',
    } <= names
    assert {config for config, *_ in PAPER_NETS.values()} <= names


@pytest.mark.parametrize('path', CONFIG_FILES, ids=lambda p: osp.basename(p)[:-3])
def test_config_builds_and_scores(path):
    cfg = Config.fromfile(path)
    assert cfg.model.head.num_classes == 80
    model = _build(cfg.model)
    model.init_weights()
    model.eval()
    # 224 is the 3D paper's input for the CIFAR-layout nets; the four-stage ResNets serve only the
    # intra-class paper (32 and 64 px), and at 224 they would cost seconds of CPU per test. A batch
    # of 2 at 32 px checks the batch dimension; one image checks the larger size (eval mode: the
    # scores of an image do not depend on the rest of its batch), at half the cost of two.
    large = 64 if cfg.model.backbone.type == 'CifarFourStageResNet' else 224
    with torch.no_grad():
        for batch, size in ((2, 32), (1, large)):
            scores = model(torch.rand(batch, 3, size, size), mode='tensor')
            assert scores.shape == (batch, 80)
            assert torch.isfinite(scores).all()


@pytest.mark.parametrize('name', ['resnet20', 'wrn_16_2', 'vgg8', 'mobilenetv2', 'shufflev2'])
def test_every_parameter_gets_a_gradient(name):
    """No unused parameters with the default out_indices (DDP find_unused_parameters=False)."""
    model = _classifier(name, 5)
    model.train()
    model(torch.randn(2, 3, 32, 32), mode='tensor').sum().backward()
    missing = [n for n, p in model.named_parameters() if p.grad is None]
    assert not missing


def test_init_matches_the_reference_scheme():
    net = CifarResNet(depth=20)
    net.init_weights()
    conv = net.layer3[0].conv2  # 64 -> 64, 3x3: fan_out = 576
    assert abs(conv.weight.std().item() - (2 / 576) ** 0.5) < 0.1 * (2 / 576) ** 0.5
    assert torch.equal(net.bn1.weight, torch.ones(16))
    assert torch.equal(net.bn1.bias, torch.zeros(16))
    vgg = CifarVGG(depth=8)
    torch.nn.init.normal_(vgg.block0[0].bias)
    vgg.init_weights()
    assert torch.equal(vgg.block0[0].bias, torch.zeros(64))  # conv biases zeroed as in mdistiller


@pytest.mark.parametrize(
    'net, present, absent',
    [
        (
            lambda: CifarResNet(depth=8, width_multiplier=4),
            {
                'conv1.weight',
                'bn1.running_mean',
                'layer1.0.conv1.weight',
                'layer1.0.bn2.weight',
                'layer1.0.downsample.0.weight',
                'layer3.0.downsample.1.running_var',
            },
            set(),
        ),
        (
            lambda: WideResNet(depth=16, widen_factor=2),
            {
                'conv1.weight',
                'block1.layer.0.bn1.weight',
                'block1.layer.0.convShortcut.weight',
                'block3.layer.1.conv2.weight',
                'bn1.weight',
            },
            set(),
        ),
        (lambda: WideResNet(16, 1), set(), {'block1.layer.0.convShortcut.weight'}),
        (
            lambda: CifarVGG(depth=13),
            {
                'block0.0.weight',
                'block0.0.bias',
                'block0.1.running_mean',
                'block0.3.weight',
                'block4.4.weight',
            },
            {'block0.5.weight'},
        ),
    ],
    ids=['resnet8x4', 'wrn_16_2', 'wrn_16_1', 'vgg13'],
)
def test_state_dict_keys_follow_the_reference_names(net, present, absent):
    keys = set(net().state_dict())
    assert present <= keys and not absent & keys


def _full(name: str):
    """The backbone ``name`` with every output selected, in eval mode."""
    backbone_cfg, shapes = NETS[name]
    return _build(dict(backbone_cfg, out_indices=tuple(range(len(shapes))))).eval()


def _stem_shape(name: str) -> tuple[int, int, int]:
    return next(shape for prefix, shape in STEM_SHAPES.items() if name.startswith(prefix))


@pytest.mark.parametrize('name', sorted(NETS))
def test_stage_taps_record_the_forward_outputs(name):
    net = _full(name)
    spec = {f'stage{i}': path for i, path in enumerate(net.stage_paths())}
    spec['stem'] = net.stem_path
    spec.update({f'pre{i}': path for i, path in enumerate(net.preact_paths())})
    with torch.no_grad(), Taps(net, spec) as taps:
        outs = net(torch.randn(2, 3, 32, 32))
    values = taps.values()
    assert len(net.stage_paths()) == len(outs) == len(net.preact_paths())
    for i, out in enumerate(outs):
        assert torch.equal(values[f'stage{i}'], out)
        assert values[f'pre{i}'].shape == out.shape
    assert tuple(values['stem'].shape) == (2,) + _stem_shape(name)


def _shuffle_v2_post(net, i: int, pre: torch.Tensor) -> torch.Tensor:
    return net.get_submodule(f'layer{i + 1}')[-1].shuffle(pre.relu()) if i < 3 else pre.relu()


# family -> (post-ReLU paths paired with preact_paths()[k] for k in ``pre_indices`` (None: all),
#            map from the pre-ReLU tensor of pair k to the post-ReLU one)
POST_RELU = {
    'resnet': (lambda net: net.stage_paths(), None, lambda net, k, pre: pre.relu()),
    'ResNet': (lambda net: net.stage_paths(), None, lambda net, k, pre: pre.relu()),
    'wrn': (
        lambda net: ['block2.layer.0.relu1', 'block3.layer.0.relu1', 'relu'],
        None,
        lambda net, k, pre: pre.relu(),
    ),
    'vgg': (lambda net: net.stage_paths(), None, lambda net, k, pre: pre.relu()),
    'mobilenetv2': (lambda net: ['conv2'], [7], lambda net, k, pre: pre.relu()),
    'shufflev1': (lambda net: net.stage_paths(), None, lambda net, k, pre: pre.relu()),
    'shufflev2': (lambda net: net.stage_paths(), None, _shuffle_v2_post),
}


@pytest.mark.parametrize('name', sorted(NETS))
def test_pre_relu_taps_have_negatives_and_post_relu_taps_do_not(name):
    net = _full(name)
    post_paths, pre_indices, to_post = next(
        entry for prefix, entry in POST_RELU.items() if name.startswith(prefix)
    )
    pre_paths = net.preact_paths()
    pre_indices = pre_indices or list(range(len(pre_paths)))
    spec = {f'pre{k}': path for k, path in enumerate(pre_paths)}
    spec.update({f'post{k}': path for k, path in zip(pre_indices, post_paths(net))})
    with torch.no_grad(), Taps(net, spec) as taps:
        net(torch.randn(2, 3, 32, 32))
    values = taps.values()
    for k in range(len(pre_paths)):
        assert (values[f'pre{k}'] < 0).any(), pre_paths[k]
    for k in pre_indices:
        assert (values[f'post{k}'] >= 0).all()
        torch.testing.assert_close(values[f'post{k}'], to_post(net, k, values[f'pre{k}']))


def test_taps_resolve_inside_a_classifier():
    model = _classifier('resnet8x4', 100).eval()
    paths = {'stem': 'backbone.relu', 'l3': 'backbone.layer3', 'pre3': 'backbone.layer3.0.preact'}
    with torch.no_grad(), Taps(model, paths) as taps:
        model(torch.randn(1, 3, 32, 32), mode='tensor')
    values = taps.values()
    assert tuple(values['l3'].shape) == (1, 256, 8, 8)
    torch.testing.assert_close(values['l3'], values['pre3'].relu())


def test_bn_before_relu_paths_are_batch_norms():
    for net in (
        CifarResNet(20),
        WideResNet(16, 2),
        CifarVGG(13),
        CifarMobileNetV2(),
        CifarFourStageResNet(18),
        CifarFourStageResNet(50),
    ):
        assert all(
            isinstance(net.get_submodule(p), torch.nn.BatchNorm2d)
            for p in net.bn_before_relu_paths()
        )


def test_out_indices_selection_and_validation():
    net = CifarResNet(depth=8, out_indices=(-1, 0)).eval()
    assert net.out_indices == (0, 2)
    with torch.no_grad():
        outs = net(torch.randn(1, 3, 32, 32))
    assert [o.shape[1] for o in outs] == [16, 64]
    with pytest.raises(ValueError):
        CifarResNet(depth=8, out_indices=(3,))
    with pytest.raises(ValueError):
        CifarResNet(depth=9)
    with pytest.raises(ValueError):
        CifarResNet(depth=8, width_multiplier=2)
    assert CifarResNet(depth=8, num_filters=(16, 32, 64, 128)).stage_channels == (32, 64, 128)
    with pytest.raises(ValueError):
        WideResNet(depth=18)
    with pytest.raises(ValueError):
        CifarVGG(depth=10)


def test_vgg_pool3_rule():
    net = CifarVGG(depth=8, out_indices=(3, 4)).eval()
    with torch.no_grad():
        assert [tuple(o.shape[2:]) for o in net(torch.randn(1, 3, 32, 32))] == [(4, 4), (4, 4)]
        assert [tuple(o.shape[2:]) for o in net(torch.randn(1, 3, 64, 64))] == [(8, 8), (4, 4)]
        forced = CifarVGG(depth=8, out_indices=(4,), use_pool3=False).eval()
        assert tuple(forced(torch.randn(1, 3, 64, 64))[0].shape[2:]) == (8, 8)


def test_frozen_stages_and_norm_eval():
    net = CifarResNet(depth=8, frozen_stages=1, norm_eval=True)
    net.train()
    assert not net.conv1.weight.requires_grad and not net.layer1[0].conv1.weight.requires_grad
    assert net.layer2[0].conv1.weight.requires_grad
    assert not net.bn1.training and not net.layer3[0].bn1.training  # norm_eval: every BN
    assert net.layer3[0].conv1.training
    wrn = WideResNet(depth=16, widen_factor=1, frozen_stages=3)
    wrn.train()
    assert not any(p.requires_grad for p in wrn.parameters())
    with pytest.raises(ValueError):
        CifarResNet(depth=8, frozen_stages=4)


def test_wrn_dropout_is_active_only_in_training():
    net = WideResNet(depth=16, widen_factor=1, dropout=0.3)
    x = torch.randn(2, 3, 32, 32)
    net.train()
    assert not torch.equal(net(x)[0], net(x)[0])
    net.eval()
    with torch.no_grad():
        assert torch.equal(net(x)[0], net(x)[0])


@pytest.mark.parametrize('config_name', ['resnet34', 'resnet50'])
def test_resnet34_50_taps_preset_records_the_stages_and_their_pre_relu_sums(config_name):
    taps = Config.fromfile(config_path('_base_', 'taps', 'cifar_resnet34_50.py'))
    model = _single_label_classifier(config_name, 10).eval()
    stages = {k: v for k, v in taps.cifar_resnet34_50_taps.items() if k.startswith('stage')}
    preacts = {k: v for k, v in taps.cifar_resnet34_50_taps.items() if k.startswith('preact')}
    assert len(stages) == len(preacts) == 4
    net = model.backbone
    assert list(preacts.values()) == [f'backbone.{p}' for p in net.preact_paths()]
    with torch.no_grad(), Taps(model, dict(taps.cifar_resnet34_50_taps)) as recorder:
        model(torch.randn(1, 3, 32, 32), mode='tensor')
    values = recorder.values()
    channels = net.stage_channels
    for k in range(1, 5):
        assert values[f'stage{k}'].shape == (1, channels[k - 1], 32 >> (k - 1), 32 >> (k - 1))
        torch.testing.assert_close(values[f'stage{k}'], values[f'preact{k}'].relu())
