# Taps of the four-stage CIFAR ResNet-34 and ResNet-50 (`CifarFourStageResNet`, mdistiller's
# resnetv2.py; both have 3-4-6-3 blocks, so the same module paths) (checked with named_modules;
# docs/model_zoo.md): `stageK` = mdistiller's feats[K] (stage outputs after the stem), `preactK` =
# its preact_feats[K] (before the final ReLU, for OFD). A distiller records only the taps some
# loss or connector reads.
cifar_resnet34_50_taps = dict(
    stage1='backbone.layer1',
    stage2='backbone.layer2',
    stage3='backbone.layer3',
    stage4='backbone.layer4',
    preact1='backbone.layer1.2.preact',
    preact2='backbone.layer2.3.preact',
    preact3='backbone.layer3.5.preact',
    preact4='backbone.layer4.2.preact',
)
