# ResNet50 -> ResNet34 on Tiny ImageNet (Tables 1-2, homogeneous) with the intra-class
# contrastive paper's student recipe (tiny_imagenet.py). Train the teachers first:
# configs/intra_class/tiny_imagenet/resnet50.py (plain: the baselines) and
# configs/intra_class/tiny_imagenet/resnet50_intra_class.py ("Ours", "Ours+RKD").
_base_ = ['./tiny_imagenet.py']
model = dict(
    teacher='{{fileDirname}}/../../../intra_class/tiny_imagenet/resnet50.py',
    student='{{fileDirname}}/../../../intra_class/tiny_imagenet/resnet34.py',
    teacher_ckpt='work_dirs/intra_class/tiny_imagenet/resnet50',
)
intra_class_teacher_ckpt = 'work_dirs/intra_class/tiny_imagenet/resnet50_intra_class'
