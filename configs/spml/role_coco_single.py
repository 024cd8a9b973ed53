# Verelst et al. (WACV 2023) Table B.1, 1 label.
# ROLE: trainable per-sample label estimates (Cole et al. 2021), trained with 10x the
# network's learning rate and no weight decay.
_base_ = ['../_base_/spml/coco_resnet50_single.py']
model = dict(losses=dict(role=_base_.role_loss))
optim_wrapper = dict(
    paramwise_cfg=dict(custom_keys={'label_logits': dict(lr_mult=10.0, decay_mult=0.0)})
)
