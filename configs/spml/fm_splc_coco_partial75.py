# Verelst et al. (WACV 2023) Table B.1, 75% labels.
# Focal margin + SPLC (Zhang et al.: threshold 0.6, correction from epoch 1, margin 1, gamma 2),
# unobserved = negative.
# Threshold 0.65: Zhang et al.'s README value for COCO-75 %.
_base_ = ['../_base_/spml/coco_resnet50_partial75.py']
model = dict(
    losses=dict(splc=dict(type='UnobservedAsNegative', loss=dict(type='SPLCLoss', threshold=0.65)))
)
