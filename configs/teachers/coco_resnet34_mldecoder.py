# resnet34 on MS-COCO 2014 with an ML-Decoder head (L2D protocol), teacher recipe: 30 epochs of a
# one-cycle schedule sized for 80.
_base_ = ['../_base_/models/resnet34_ml.py', '../_base_/recipes/coco2014_l2d_teacher.py']
model = dict(
    neck=None,
    head=dict(type='MLDecoderHead', num_classes=_base_.num_classes, query_mode='frozen_random'),
)
work_dir = 'work_dirs/teachers/coco_resnet34_mldecoder'
