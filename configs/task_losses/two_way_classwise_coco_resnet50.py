# Kobayashi (CVPR 2023) Table B (MS-COCO 2014), ResNet-50:
# Two-way loss, class-wise term alone (one set per class over the
# samples of each GPU's batch).
_base_ = ['../_base_/task_losses/coco_resnet50.py']
model = dict(
    head=dict(
        loss=dict(_delete_=True, type='TwoWayMultiLabelLoss', samplewise=False, global_batch=False)
    )
)
