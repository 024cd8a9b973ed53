# ResNet50 -> MobileNetV2 on CIFAR-10 (Table 3, heterogeneous) with the intra-class
# contrastive paper's student recipe (cifar10.py). Train the teachers first:
# configs/intra_class/cifar10/resnet50.py (plain: the baselines) and
# configs/intra_class/cifar10/resnet50_intra_class.py ("Ours", "Ours+RKD").
_base_ = ['./cifar10.py']
model = dict(
    teacher='{{fileDirname}}/../../../intra_class/cifar10/resnet50.py',
    student='{{fileDirname}}/../../../intra_class/cifar10/mobilenetv2.py',
    teacher_ckpt='work_dirs/intra_class/cifar10/resnet50',
)
intra_class_teacher_ckpt = 'work_dirs/intra_class/cifar10/resnet50_intra_class'
