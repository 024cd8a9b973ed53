# VGG13 -> MobileNetV2 on Tiny ImageNet (Tables 1-2, heterogeneous) with the intra-class
# contrastive paper's student recipe (tiny_imagenet.py). Train the teachers first:
# configs/intra_class/tiny_imagenet/vgg13.py (plain: the baselines) and
# configs/intra_class/tiny_imagenet/vgg13_intra_class.py ("Ours", "Ours+RKD").
_base_ = ['./tiny_imagenet.py']
model = dict(
    teacher='{{fileDirname}}/../../../intra_class/tiny_imagenet/vgg13.py',
    student='{{fileDirname}}/../../../intra_class/tiny_imagenet/mobilenetv2.py',
    teacher_ckpt='work_dirs/intra_class/tiny_imagenet/vgg13',
)
intra_class_teacher_ckpt = 'work_dirs/intra_class/tiny_imagenet/vgg13_intra_class'
