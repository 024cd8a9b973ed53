# Single-label distillation pair resnet56 -> resnet20 on CIFAR-100 with mdistiller's recipe
# (single_label/cifar100.py). Train the teacher first with configs/cifar100/resnet56.py.
_base_ = ['./single_label/cifar100.py']
model = dict(
    teacher='{{fileDirname}}/../../cifar100/resnet56.py',
    student='{{fileDirname}}/../../cifar100/resnet20.py',
    teacher_ckpt='work_dirs/cifar100/resnet56',
)
