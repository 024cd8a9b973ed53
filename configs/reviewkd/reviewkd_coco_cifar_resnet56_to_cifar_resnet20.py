_base_ = [
    '../_base_/pairs/coco_cifar_resnet56_to_cifar_resnet20.py',
    '../_base_/methods/reviewkd_3stages.py',
]
model = _base_.method
