_base_ = [
    '../_base_/pairs/coco_cifar_resnet32x4_to_shufflenet_v2.py',
    '../_base_/methods/reviewkd_3stages.py',
]
model = _base_.method
