# ROLE: trainable per-sample label estimates (Cole et al. 2021). The estimates (parameter
# `losses.role.label_logits`) train with 10x the network's learning rate and no weight decay.
_base_ = ['../_base_/spml/multidigits.py']
model = dict(
    losses=dict(
        role=dict(
            type='ROLELoss',
            num_samples=_base_.num_train_samples,
            expected_positives=_base_.expected_positives,
        )
    )
)
optim_wrapper = dict(
    paramwise_cfg=dict(custom_keys={'label_logits': dict(lr_mult=10.0, decay_mult=0.0)})
)
