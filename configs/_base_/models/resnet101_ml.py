# Multi-label ResNet-101 (ImageNet layout): resnet50_ml.py with depth 101 and its ImageNet-1K
# weights.
_base_ = ['./resnet50_ml.py']
PRETRAINED = 'https://download.openmmlab.com/mmclassification/v0/resnet/resnet101_8xb32_in1k_20210831-539c63f8.pth'
model = dict(
    backbone=dict(depth=101, init_cfg=dict(checkpoint=PRETRAINED)), head=dict(in_channels=2048)
)
