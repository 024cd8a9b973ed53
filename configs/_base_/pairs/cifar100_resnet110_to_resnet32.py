# Single-label distillation pair resnet110 -> resnet32 on CIFAR-100 with mdistiller's recipe
# (single_label/cifar100.py). Train the teacher first with configs/cifar100/resnet110.py.
_base_ = ['./single_label/cifar100.py', '../taps/cifar_resnet110.py', '../taps/cifar_resnet32.py']
model = dict(
    teacher='{{fileDirname}}/../../cifar100/resnet110.py',
    student='{{fileDirname}}/../../cifar100/resnet32.py',
    teacher_ckpt='work_dirs/cifar100/resnet110',
    student_taps=_base_.cifar_resnet32_taps,
    teacher_taps=_base_.cifar_resnet110_taps,
)
