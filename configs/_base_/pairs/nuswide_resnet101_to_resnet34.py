# Distillation pair of the 3D paper on NUS-WIDE: resnet101 -> resnet34, L2D's reference pair with
# the ResNet-101 teacher of the paper's Table C.4 (the supplement does not name its NUS-WIDE
# pairs). Train the teacher first with configs/teachers/nuswide_resnet101_mldecoder.py (30 of 80
# epochs).
_base_ = ['./l2d/nuswide.py', './l2d/distiller.py']
model = dict(
    teacher='{{fileDirname}}/../../teachers/nuswide_resnet101_mldecoder.py',
    student='{{fileDirname}}/../../students/nuswide_resnet34_mldecoder.py',
    teacher_ckpt='work_dirs/teachers/nuswide_resnet101_mldecoder',
)
