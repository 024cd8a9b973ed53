_base_ = [
    '../_base_/pairs/own_teacher/coco_timm_convnext_tiny_to_resnet34.py',
    '../_base_/methods/l2d.py',
]
model = _base_.method
