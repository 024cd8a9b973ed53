# Single positive, regularised online label estimation (ROLE; Cole et al.); the label estimates
# learn at 10x the network's rate, without weight decay (as configs/spml/role_multidigits.py).
_base_ = ['../../_base_/ranking/single_positive.py']
model = dict(losses=dict(role=_base_.role_loss))
optim_wrapper = dict(
    paramwise_cfg=dict(custom_keys={'label_logits': dict(lr_mult=10.0, decay_mult=0.0)})
)
