# WRN-40-2 -> WRN-16-2 on Tiny ImageNet (Tables 1-2, homogeneous) with the intra-class
# contrastive paper's student recipe (tiny_imagenet.py). Train the teachers first:
# configs/intra_class/tiny_imagenet/wrn_40_2.py (plain: the baselines) and
# configs/intra_class/tiny_imagenet/wrn_40_2_intra_class.py ("Ours", "Ours+RKD").
_base_ = ['./tiny_imagenet.py']
model = dict(
    teacher='{{fileDirname}}/../../../intra_class/tiny_imagenet/wrn_40_2.py',
    student='{{fileDirname}}/../../../intra_class/tiny_imagenet/wrn_16_2.py',
    teacher_ckpt='work_dirs/intra_class/tiny_imagenet/wrn_40_2',
)
intra_class_teacher_ckpt = 'work_dirs/intra_class/tiny_imagenet/wrn_40_2_intra_class'
