# Multi-label ResNet-18 (ImageNet layout): resnet50_ml.py with depth 18 and its ImageNet-1K
# weights.
_base_ = ['./resnet50_ml.py']
PRETRAINED = 'https://download.openmmlab.com/mmclassification/v0/resnet/resnet18_8xb32_in1k_20210831-fbbb1da6.pth'
model = dict(
    backbone=dict(depth=18, init_cfg=dict(checkpoint=PRETRAINED)), head=dict(in_channels=512)
)
