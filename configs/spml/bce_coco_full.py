# Verelst et al. (WACV 2023) Table B.1, "BCE (fully annotated)" (one run serves the three columns):
# the head's BCE, summed over the B x C entries, on the clean training labels.
_base_ = ['../_base_/spml/coco_resnet50_full.py']
model = dict(task_loss_weight=1.0)
