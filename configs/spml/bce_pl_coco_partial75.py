# Verelst et al. (WACV 2023) Table B.1, 75% labels.
# BCE + pseudo label (Zhang et al.'s baseline), read as SPLC without margin or focusing:
# plain BCE whose negatives with sigmoid > 0.6 become positives from epoch 1 (mlkd's reading).
_base_ = ['../_base_/spml/coco_resnet50_partial75.py']
model = dict(
    losses=dict(
        bce_pl=dict(type='UnobservedAsNegative', loss=dict(type='SPLCLoss', margin=0.0, gamma=0.0))
    )
)
