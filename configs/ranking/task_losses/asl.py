# The ranking student on complete labels with ASL (its paper's setting: gamma_pos 0,
# gamma_neg 4, kept on val over {2, 6}; clip 0.05; docs/benchmarks/task_losses.md).
_base_ = ['../../_base_/ranking/full_labels.py']
model = dict(head=dict(loss=dict(_delete_=True, type='AsymmetricMultiLabelLoss')))
