# repvgg_a0 on PASCAL VOC 2007 with an ML-Decoder head (L2D protocol), student recipe: 80 epochs
# one-cycle; the "Student" rows of the 3D tables.
_base_ = ['../_base_/models/repvgg_a0_ml.py', '../_base_/recipes/voc2007_l2d.py']
model = dict(
    neck=None,
    head=dict(type='MLDecoderHead', num_classes=_base_.num_classes, query_mode='frozen_random'),
)
