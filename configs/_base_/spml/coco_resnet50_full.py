# Verelst et al. (WACV 2023) Table B.1, "BCE (fully annotated)": every training label observed (no
# observed-label draw).
_base_ = ['../datasets/coco2014_spml.py', './coco_resnet50.py']
train_dataloader = dict(dataset=dict(observed_labels=None))
