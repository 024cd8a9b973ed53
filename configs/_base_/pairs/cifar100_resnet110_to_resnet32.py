# Single-label distillation pair resnet110 -> resnet32 on CIFAR-100 with mdistiller's recipe
# (single_label/cifar100.py). Train the teacher first with configs/cifar100/resnet110.py.
_base_ = ['./single_label/cifar100.py']
model = dict(
    teacher='{{fileDirname}}/../../cifar100/resnet110.py',
    student='{{fileDirname}}/../../cifar100/resnet32.py',
    teacher_ckpt='work_dirs/cifar100/resnet110',
)
