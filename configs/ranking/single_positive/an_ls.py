# Single positive, assume negative with label smoothing 0.1 (AN-LS; Cole et al.).
_base_ = ['../../_base_/ranking/single_positive.py']
model = dict(losses=dict(an_ls=dict(type='AssumeNegativeLoss', label_smoothing=0.1)))
