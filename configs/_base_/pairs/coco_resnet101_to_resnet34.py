# Distillation pair of L2D's reference pair (3D Figure B.1): resnet101 -> resnet34 on MS-COCO 2014.
# Train the teacher first with configs/teachers/coco_resnet101_mldecoder.py (30 of 80 epochs).
_base_ = ['./l2d/coco2014.py', './l2d/distiller.py']
model = dict(
    teacher='{{fileDirname}}/../../teachers/coco_resnet101_mldecoder.py',
    student='{{fileDirname}}/../../students/coco_resnet34_mldecoder.py',
    teacher_ckpt='work_dirs/teachers/coco_resnet101_mldecoder',
)
