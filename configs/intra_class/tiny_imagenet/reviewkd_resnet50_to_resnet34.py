_base_ = [
    '../../_base_/pairs/intra_class/tiny_imagenet_resnet50_to_resnet34.py',
    '../../_base_/methods/reviewkd_mdistiller.py',
]
model = _base_.method
