# resnet101 on NUS-WIDE (81 concepts) with an ML-Decoder head (L2D protocol), teacher recipe: 30
# epochs of a one-cycle schedule sized for 80. The teacher of the 3D paper's NUS-WIDE pairs and of
# its Table C.4 (tools/analysis_tools/teacher_score_stats.py).
_base_ = ['../_base_/models/resnet101_ml.py', '../_base_/recipes/nuswide_l2d_teacher.py']
model = dict(
    neck=None,
    head=dict(type='MLDecoderHead', num_classes=_base_.num_classes, query_mode='frozen_random'),
)
work_dir = 'work_dirs/teachers/nuswide_resnet101_mldecoder'
