# VGG13 -> VGG8 on CIFAR-100 (Tables 1-2, homogeneous) with the intra-class
# contrastive paper's student recipe (cifar100.py). Train the teachers first:
# configs/intra_class/cifar100/vgg13.py (plain: the baselines) and
# configs/intra_class/cifar100/vgg13_intra_class.py ("Ours", "Ours+RKD").
_base_ = ['./cifar100.py']
model = dict(
    teacher='{{fileDirname}}/../../../intra_class/cifar100/vgg13.py',
    student='{{fileDirname}}/../../../intra_class/cifar100/vgg8.py',
    teacher_ckpt='work_dirs/intra_class/cifar100/vgg13',
)
intra_class_teacher_ckpt = 'work_dirs/intra_class/cifar100/vgg13_intra_class'
