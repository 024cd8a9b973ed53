# MultiDigits teacher from timm: timm's resnet18 in place of the demo teacher's CIFAR-layout
# ResNet (same ML-Decoder head). Output stride 8 keeps its last maps 4x4 on the 32-pixel mosaics,
# as the demo nets'. Any timm model name works the same way; `weights` names a local file of its
# timm weights (.safetensors / .pth / .bin), None: timm's random initialisation.
_base_ = ['./digits_resnet_teacher_mldecoder.py', '../taps/timm.py']
model = dict(
    backbone=dict(
        _delete_=True,
        type='TimmBackbone',
        model_name='resnet18',
        output_stride=8,
        weights=None,
    ),
    head=dict(in_channels=512),
)
# This network's taps replace the ResNet's it inherits.
taps = dict(_delete_=True, **_base_.timm_taps)
