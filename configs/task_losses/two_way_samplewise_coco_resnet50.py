# Kobayashi (CVPR 2023) Table B (MS-COCO 2014), ResNet-50: Two-way loss, sample-wise term alone
# (the paper's eq. 15).
_base_ = ['../_base_/task_losses/coco_resnet50.py']
model = dict(head=dict(loss=dict(_delete_=True, type='TwoWayMultiLabelLoss', classwise=False)))
