# The ranking student on complete labels with the RetinaNet focal loss (alpha 0.25, gamma 2).
_base_ = ['../../_base_/ranking/full_labels.py']
model = dict(head=dict(loss=dict(_delete_=True, type='SigmoidFocalLoss')))
