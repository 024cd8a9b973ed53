# The ranking student on complete labels with ASL (its paper's setting: gamma_pos 0,
# gamma_neg 4, clip 0.05).
_base_ = ['../../_base_/ranking/full_labels.py']
model = dict(head=dict(loss=dict(_delete_=True, type='AsymmetricMultiLabelLoss')))
