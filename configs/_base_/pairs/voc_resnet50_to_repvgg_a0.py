# Distillation pair of 3D Table B.2: resnet50 -> repvgg_a0 on PASCAL VOC 2007. Train the teacher
# first with configs/teachers/voc_resnet50_mldecoder.py (30 of 80 epochs).
_base_ = ['./l2d/voc2007.py', './l2d/distiller.py']
model = dict(
    teacher='{{fileDirname}}/../../teachers/voc_resnet50_mldecoder.py',
    student='{{fileDirname}}/../../students/voc_repvgg_a0_mldecoder.py',
    teacher_ckpt='work_dirs/teachers/voc_resnet50_mldecoder',
)
