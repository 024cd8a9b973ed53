# Verelst et al. (WACV 2023) Table B.1, 75% labels.
# WAN (weak assume negative): unobserved labels weighted 1/(C-1) (Cole et al. 2021).
_base_ = ['../_base_/spml/coco_resnet50_partial75.py']
model = dict(losses=dict(wan=dict(type='WeakAssumeNegativeLoss')))
