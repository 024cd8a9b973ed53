# Kobayashi (CVPR 2023) Table C: ResNet-50 on NUS-WIDE (81 concepts), Two-way recipe.
_base_ = ['../datasets/nuswide_two_way.py', './resnet50.py']
model = dict(head=dict(num_classes=81))
