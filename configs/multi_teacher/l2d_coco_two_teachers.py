# MS-COCO 2014 (L2D protocol): resnet34 distilled with L2D from two teachers of all 80 classes,
# the ResNet-101 of configs/teachers/coco_resnet101_mldecoder.py and timm's ConvNeXt-T of
# configs/own_teacher/coco_timm_convnext_tiny_mldecoder_teacher.py (train both first); each class
# takes its target from the teacher with the better AP on it on val (label_targets='best_val_ap',
# measured before training; docs/multi_teacher.md).
_base_ = ['../_base_/pairs/coco_resnet101_to_resnet34.py', '../_base_/methods/l2d.py']
no_cache = dict(dir=None, mode=None, dtype='float32')
model = dict(
    _delete_=True,
    type='MultiTeacherDistiller',
    loss_guard=_base_.model.loss_guard,
    student=_base_.model.student,
    teachers=dict(
        resnet=dict(
            network=_base_.model.teacher,
            ckpt=_base_.model.teacher_ckpt,
            cache=no_cache,
            **_base_.method,
        ),
        convnext=dict(
            network='{{fileDirname}}/../own_teacher/coco_timm_convnext_tiny_mldecoder_teacher.py',
            ckpt='work_dirs/own_teacher/coco_timm_convnext_tiny_mldecoder',
            cache=no_cache,
            **_base_.method,
        ),
    ),
    label_targets='best_val_ap',
    probe_input_size=_base_.model.probe_input_size,
)
