# Distillation pair on MS-COCO 2014 (L2D protocol) with a teacher from timm: ConvNeXt-T started from
# timm's Hub weights -> resnet34. Train the teacher first with
# configs/own_teacher/coco_timm_convnext_tiny_mldecoder_teacher.py.
_base_ = ['../l2d/coco2014.py', '../l2d/distiller.py']
model = dict(
    teacher='{{fileDirname}}/../../../own_teacher/coco_timm_convnext_tiny_mldecoder_teacher.py',
    student='{{fileDirname}}/../../../students/coco_resnet34_mldecoder.py',
    teacher_ckpt='work_dirs/own_teacher/coco_timm_convnext_tiny_mldecoder',
)
