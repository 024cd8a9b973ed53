# Single-label distillation pair vgg13 -> mobilenetv2 on CIFAR-100 with mdistiller's recipe
# (single_label/cifar100.py). Train the teacher first with configs/cifar100/vgg13.py.
_base_ = ['./single_label/cifar100_mobile_student.py']
model = dict(
    teacher='{{fileDirname}}/../../cifar100/vgg13.py',
    student='{{fileDirname}}/../../cifar100/mobilenetv2.py',
    teacher_ckpt='work_dirs/cifar100/vgg13',
)
