# The MultiDigits pair (../multidigits.py) with a teacher trained elsewhere with torchvision: a
# torchvision resnet18 with 10 outputs, its state dict in `torchvision_resnet18.pth`, loaded into
# mmpretrain's ResNet-18 by the torchvision_resnet key layout (mlkd/models/weight_layouts.py).
# mmpretrain's ResNet has the module names of mmpretrain's ResNet_CIFAR, so the demo's stage taps
# apply. (`_delete_`: these dicts replace the base's paths.)
_base_ = ['../multidigits.py']
model = dict(
    teacher=dict(
        _delete_=True,
        cfg_path='{{fileDirname}}/../../models/resnet18_ml.py',
        backbone=dict(init_cfg=None),
        head=dict(num_classes=_base_.num_classes),
    ),
    teacher_ckpt=dict(_delete_=True, path='torchvision_resnet18.pth', layout='torchvision_resnet'),
)
