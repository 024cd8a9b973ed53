# Distillation pair of 3D Table B.3 (reversed distillation): resnet34 -> resnet101 on MS-COCO 2014.
# Train the teacher first with configs/teachers/coco_resnet34_mldecoder.py (30 of 80 epochs).
_base_ = ['./l2d/coco2014.py', './l2d/distiller.py']
model = dict(
    teacher='{{fileDirname}}/../../teachers/coco_resnet34_mldecoder.py',
    student='{{fileDirname}}/../../students/coco_resnet101_mldecoder.py',
    teacher_ckpt='work_dirs/teachers/coco_resnet34_mldecoder',
)
