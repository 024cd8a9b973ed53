# Verelst et al. (WACV 2023) Table B.1, 1 label.
# EN + CL (Verelst et al. 2023): momentum, distance and weight are mlkd's reconstruction
# (docs/methods.md §3.3), not the paper's values.
_base_ = ['../_base_/spml/coco_resnet50_single.py']
model = dict(losses=dict(en=_base_.en_loss, cl=_base_.cl_loss))
