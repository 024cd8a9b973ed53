# Verelst et al. (WACV 2023) Table B.1, 1 label.
# AN (assume negative): BCE with every unobserved label taken as negative (Cole et al. 2021).
_base_ = ['../_base_/spml/coco_resnet50_single.py']
model = dict(losses=dict(an=dict(type='AssumeNegativeLoss')))
