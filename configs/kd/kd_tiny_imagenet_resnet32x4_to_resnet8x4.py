_base_ = [
    '../_base_/pairs/tiny_imagenet_resnet32x4_to_resnet8x4.py',
    '../_base_/methods/kd_softmax.py',
]
model = _base_.method
