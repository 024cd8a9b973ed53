# Kobayashi (CVPR 2023) Table C (NUS-WIDE), ResNet-50: Two-way loss, sample-wise term alone (the
# paper's eq. 15).
_base_ = ['../_base_/task_losses/nuswide_resnet50.py']
model = dict(head=dict(loss=dict(_delete_=True, type='TwoWayMultiLabelLoss', classwise=False)))
