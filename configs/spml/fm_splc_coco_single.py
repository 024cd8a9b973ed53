# Verelst et al. (WACV 2023) Table B.1, 1 label.
# Focal margin + SPLC (Zhang et al.: threshold 0.6, correction from epoch 1, margin 1, gamma 2),
# unobserved = negative.
_base_ = ['../_base_/spml/coco_resnet50_single.py']
model = dict(losses=dict(splc=dict(type='UnobservedAsNegative', loss=dict(type='SPLCLoss'))))
