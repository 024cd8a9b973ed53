# cifar_resnet20 on MS-COCO 2014 with an ML-Decoder head (L2D protocol), student recipe: 80 epochs
# one-cycle; the "Student" rows of the 3D tables. CIFAR layout, trained from scratch (no ImageNet
# weights exist).
_base_ = ['../_base_/models/cifar/resnet20.py', '../_base_/recipes/coco2014_l2d.py']
model = dict(
    neck=None,
    head=dict(type='MLDecoderHead', num_classes=_base_.num_classes, query_mode='frozen_random'),
)
