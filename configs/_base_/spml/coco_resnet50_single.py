# Verelst et al. (WACV 2023) Table B.1, "1 label" column: one observed positive per training image.
_base_ = ['../datasets/coco2014_spml.py', './coco_resnet50.py']
