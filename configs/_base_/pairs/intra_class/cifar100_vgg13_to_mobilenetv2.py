# VGG13 -> MobileNetV2 on CIFAR-100 (Tables 1-2, heterogeneous) with the intra-class
# contrastive paper's student recipe (cifar100.py). Train the teachers first:
# configs/intra_class/cifar100/vgg13.py (plain: the baselines) and
# configs/intra_class/cifar100/vgg13_intra_class.py ("Ours", "Ours+RKD").
_base_ = ['./cifar100.py', '../../taps/cifar_vgg.py', '../../taps/cifar_mobilenetv2.py']
model = dict(
    teacher='{{fileDirname}}/../../../intra_class/cifar100/vgg13.py',
    student='{{fileDirname}}/../../../intra_class/cifar100/mobilenetv2.py',
    teacher_ckpt='work_dirs/intra_class/cifar100/vgg13',
    student_taps=_base_.cifar_mobilenetv2_taps,
    teacher_taps=_base_.cifar_vgg_taps,
)
intra_class_teacher_ckpt = 'work_dirs/intra_class/cifar100/vgg13_intra_class'
