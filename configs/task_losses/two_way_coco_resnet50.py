# Kobayashi (CVPR 2023) Table B (MS-COCO 2014), ResNet-50:
# Two-way loss (T_P 4, T_N 1), class-wise term on each GPU's batch as the reference
# (global_batch=False: 128 of the global 512).
_base_ = ['../_base_/task_losses/coco_resnet50.py']
model = dict(head=dict(loss=dict(_delete_=True, type='TwoWayMultiLabelLoss', global_batch=False)))
