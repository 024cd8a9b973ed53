# Verelst et al. (WACV 2023) Table B.1, 1 label.
# ASL (paper setting: gamma_pos 0, gamma_neg 4, clip 0.05), unobserved = negative.
_base_ = ['../_base_/spml/coco_resnet50_single.py']
model = dict(
    losses=dict(asl=dict(type='UnobservedAsNegative', loss=dict(type='AsymmetricMultiLabelLoss')))
)
