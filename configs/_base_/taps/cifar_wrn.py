# Taps of the CIFAR-layout WRN-16-2, WRN-40-1 and WRN-40-2 (same module paths) (checked with
# named_modules; docs/model_zoo.md): `stageK` = mdistiller's feats[K] (stage outputs after the
# stem; the third is block3's output, before the final BN and ReLU), `preactK` = its
# preact_feats[K] (for OFD and ReviewKD's teacher). A distiller records only the taps some loss or
# connector reads.
cifar_wrn_taps = dict(
    stage1='backbone.block1',
    stage2='backbone.block2',
    stage3='backbone.block3',
    preact1='backbone.block2.layer.0.bn1',
    preact2='backbone.block3.layer.0.bn1',
    preact3='backbone.bn1',
)
