# resnet101 on PASCAL VOC 2007 with an ML-Decoder head (L2D protocol), teacher recipe: 30 epochs of
# a one-cycle schedule sized for 80. The ResNet-101 teacher of the 3D paper's Table C.4 on VOC
# (tools/analysis_tools/teacher_score_stats.py).
_base_ = ['../_base_/models/resnet101_ml.py', '../_base_/recipes/voc2007_l2d_teacher.py']
model = dict(
    neck=None,
    head=dict(type='MLDecoderHead', num_classes=_base_.num_classes, query_mode='frozen_random'),
)
work_dir = 'work_dirs/teachers/voc_resnet101_mldecoder'
