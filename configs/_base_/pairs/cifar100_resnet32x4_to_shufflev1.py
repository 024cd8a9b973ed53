# Single-label distillation pair resnet32x4 -> shufflev1 on CIFAR-100 with mdistiller's recipe
# (single_label/cifar100.py). Train the teacher first with configs/cifar100/resnet32x4.py.
_base_ = ['./single_label/cifar100_mobile_student.py']
model = dict(
    teacher='{{fileDirname}}/../../cifar100/resnet32x4.py',
    student='{{fileDirname}}/../../cifar100/shufflev1.py',
    teacher_ckpt='work_dirs/cifar100/resnet32x4',
)
