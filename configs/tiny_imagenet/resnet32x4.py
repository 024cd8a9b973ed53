# Tiny ImageNet (200 classes, 64x64) classifier resnet32x4 (CIFAR layout; global pooling makes it
# size-agnostic) with the CIFAR recipe of mdistiller.
_base_ = ['../_base_/models/cifar/resnet32x4.py', '../_base_/recipes/tiny_imagenet.py']
model = dict(head=_base_.single_label_head)
