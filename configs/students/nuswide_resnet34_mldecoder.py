# resnet34 on NUS-WIDE (81 concepts) with an ML-Decoder head (L2D protocol), student recipe: 80
# epochs one-cycle; the "Student" row of the 3D paper's NUS-WIDE comparison.
_base_ = ['../_base_/models/resnet34_ml.py', '../_base_/recipes/nuswide_l2d.py']
model = dict(
    neck=None,
    head=dict(type='MLDecoderHead', num_classes=_base_.num_classes, query_mode='frozen_random'),
)
