_base_ = ['../_base_/pairs/nuswide_resnet101_to_resnet34.py', '../_base_/methods/rkd.py']
model = _base_.method
