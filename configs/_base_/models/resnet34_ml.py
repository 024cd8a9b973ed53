# Multi-label ResNet-34 (ImageNet layout): resnet50_ml.py with depth 34 and its ImageNet-1K
# weights.
_base_ = ['./resnet50_ml.py']
PRETRAINED = 'https://download.openmmlab.com/mmclassification/v0/resnet/resnet34_8xb32_in1k_20210831-f257d4e6.pth'
model = dict(
    backbone=dict(depth=34, init_cfg=dict(checkpoint=PRETRAINED)), head=dict(in_channels=512)
)
