# Distillation pair of 3D Table B.1: cifar_resnet32x4 -> shufflenet_v2 on MS-COCO 2014. Train the
# teacher first with configs/teachers/coco_cifar_resnet32x4_mldecoder.py (30 of 80 epochs).
_base_ = ['./l2d/coco2014.py', './l2d/distiller.py']
model = dict(
    teacher='{{fileDirname}}/../../teachers/coco_cifar_resnet32x4_mldecoder.py',
    student='{{fileDirname}}/../../students/coco_shufflenet_v2_mldecoder.py',
    teacher_ckpt='work_dirs/teachers/coco_cifar_resnet32x4_mldecoder',
)
