# Verelst et al. (WACV 2023) Table B.1, 40% labels.
# Hill (Zhang et al.: lambda 1.5, margin 1, gamma 2), unobserved = negative.
_base_ = ['../_base_/spml/coco_resnet50_partial40.py']
model = dict(losses=dict(hill=dict(type='UnobservedAsNegative', loss=dict(type='HillLoss'))))
