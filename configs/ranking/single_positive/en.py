# Single positive, expected negative (EN; the SCL paper, after Cole et al.'s ROLE).
_base_ = ['../../_base_/ranking/single_positive.py']
model = dict(losses=dict(en=_base_.en_loss))
