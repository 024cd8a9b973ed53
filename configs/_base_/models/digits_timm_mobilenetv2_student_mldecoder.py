# MultiDigits student from timm: timm's mobilenetv2_050 in place of the demo student's
# CIFAR-layout ResNet (same ML-Decoder head). Output stride 8 keeps its last maps 4x4 on the
# 32-pixel mosaics, as the demo nets'.
_base_ = ['./digits_resnet_student_mldecoder.py', '../taps/timm.py']
model = dict(
    backbone=dict(
        _delete_=True,
        type='TimmBackbone',
        model_name='mobilenetv2_050',
        output_stride=8,
        weights=None,
    ),
    head=dict(in_channels=160),
)
# This network's taps replace the ResNet's it inherits.
taps = dict(_delete_=True, **_base_.timm_taps)
