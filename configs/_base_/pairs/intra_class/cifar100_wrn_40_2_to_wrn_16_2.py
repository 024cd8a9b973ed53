# WRN-40-2 -> WRN-16-2 on CIFAR-100 (Tables 1-2, homogeneous) with the intra-class
# contrastive paper's student recipe (cifar100.py). Train the teachers first:
# configs/intra_class/cifar100/wrn_40_2.py (plain: the baselines) and
# configs/intra_class/cifar100/wrn_40_2_intra_class.py ("Ours", "Ours+RKD").
_base_ = ['./cifar100.py']
model = dict(
    teacher='{{fileDirname}}/../../../intra_class/cifar100/wrn_40_2.py',
    student='{{fileDirname}}/../../../intra_class/cifar100/wrn_16_2.py',
    teacher_ckpt='work_dirs/intra_class/cifar100/wrn_40_2',
)
intra_class_teacher_ckpt = 'work_dirs/intra_class/cifar100/wrn_40_2_intra_class'
