# Kobayashi (CVPR 2023) Table B: ResNet-50 on MS-COCO 2014 (80 classes), Two-way recipe.
_base_ = ['../datasets/coco2014_two_way.py', './resnet50.py']
