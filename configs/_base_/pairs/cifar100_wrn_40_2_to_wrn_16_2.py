# Single-label distillation pair wrn_40_2 -> wrn_16_2 on CIFAR-100 with mdistiller's recipe
# (single_label/cifar100.py). Train the teacher first with configs/cifar100/wrn_40_2.py.
_base_ = ['./single_label/cifar100.py']
model = dict(
    teacher='{{fileDirname}}/../../cifar100/wrn_40_2.py',
    student='{{fileDirname}}/../../cifar100/wrn_16_2.py',
    teacher_ckpt='work_dirs/cifar100/wrn_40_2',
)
