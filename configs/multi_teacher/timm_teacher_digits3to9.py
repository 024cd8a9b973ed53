# teacher_digits3to9.py with timm's resnet18 in place of the demo teacher's network (the backbone
# of configs/_base_/models/digits_timm_resnet18_mldecoder.py, same ML-Decoder head), trained from
# timm's random initialisation, or from a timm weights file with
# `--cfg-options model.backbone.weights=resnet18.safetensors`. Teacher `high` of
# l2d_resnet_and_timm_teachers.py: two teachers of different architectures.
_base_ = ['./teacher_digits3to9.py', '../_base_/taps/timm.py']
model = dict(
    backbone=dict(
        _delete_=True, type='TimmBackbone', model_name='resnet18', output_stride=8, weights=None
    ),
    head=dict(in_channels=512),
)
# The timm network's taps replace the ResNet's it inherits.
taps = dict(_delete_=True, **_base_.timm_taps)
