# Verelst et al. (WACV 2023) Table B.1, 75% labels.
# Focal (Zhang et al.'s baseline): ASL-style focal, both gammas 2, no clip, unobserved = negative.
_base_ = ['../_base_/spml/coco_resnet50_partial75.py']
model = dict(
    losses=dict(focal=dict(type='UnobservedAsNegative', loss=dict(type='AsymmetricFocalLoss')))
)
