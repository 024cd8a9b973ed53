# Verelst et al. (WACV 2023) Table B.1, "40% labels" column: 40 % of each training image's
# positives observed.
_base_ = ['../datasets/coco2014_spml_partial40.py', './coco_resnet50.py']
