# Single positive, weak assume negative (WAN; Cole et al.): unobserved labels down-weighted.
_base_ = ['../../_base_/ranking/single_positive.py']
model = dict(losses=dict(wan=dict(type='WeakAssumeNegativeLoss')))
