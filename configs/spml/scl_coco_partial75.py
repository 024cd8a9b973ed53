# Verelst et al. (WACV 2023) Table B.1, 75% labels.
# EN + SCL (Verelst et al. 2023): momentum, distance and weight are mlkd's reconstruction
# (docs/methods.md §3.3), not the paper's values. Heatmap store: 82,081 x 80 x 28 x 28 uint8
# (5.1 GB of host memory).
_base_ = ['../_base_/spml/coco_resnet50_partial75.py']
model = dict(losses=dict(en=_base_.en_loss, scl=_base_.scl_loss))
