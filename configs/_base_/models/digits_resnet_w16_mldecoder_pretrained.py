# CIFAR-layout ResNet-18 of width 16 (between the demo's student, 8, and teacher, 24) with the
# teacher's ML-Decoder head (d = 64), backbone from the bundled MultiGlyphs pretraining
# (configs/pretrain/multiglyphs_w16_backbone.py): the ranking benchmark's teacher.
_base_ = ['./digits_resnet_teacher_mldecoder_pretrained.py']
model = dict(
    backbone=dict(
        stem_channels=16,
        base_channels=16,
        init_cfg=dict(type='BundledPretrained', name='multiglyphs_w16_backbone'),
    ),
    head=dict(in_channels=128),
)
