# Single positive, assume negative (AN): every unobserved label a negative.
_base_ = ['../../_base_/ranking/single_positive.py']
model = dict(losses=dict(an=dict(type='AssumeNegativeLoss')))
