# Verelst et al. (WACV 2023) Table B.1, "75% labels" column: 75 % of each training image's
# positives observed.
_base_ = ['../datasets/coco2014_spml_partial75.py', './coco_resnet50.py']
