# The ranking student on complete labels with the Two-way loss (T_P 4, T_N 1; Kobayashi, CVPR
# 2023).
_base_ = ['../../_base_/ranking/full_labels.py']
model = dict(head=dict(loss=dict(_delete_=True, type='TwoWayMultiLabelLoss')))
