# Verelst et al. (WACV 2023) Table B.1, 75% labels.
# BCE-LS: AN with label smoothing 0.1 (Cole et al. 2021; "BCE-LS" in Zhang et al.'s table).
_base_ = ['../_base_/spml/coco_resnet50_partial75.py']
model = dict(losses=dict(an_ls=dict(type='AssumeNegativeLoss', label_smoothing=0.1)))
