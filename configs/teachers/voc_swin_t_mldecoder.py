# swin_t on PASCAL VOC 2007 with an ML-Decoder head (L2D protocol), teacher recipe: 30 epochs of a
# one-cycle schedule sized for 80.
_base_ = ['../_base_/models/swin_t_ml.py', '../_base_/recipes/voc2007_l2d_teacher.py']
model = dict(
    neck=None,
    head=dict(type='MLDecoderHead', num_classes=_base_.num_classes, query_mode='frozen_random'),
)
work_dir = 'work_dirs/teachers/voc_swin_t_mldecoder'
