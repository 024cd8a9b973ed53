# Kobayashi (CVPR 2023) Table C (NUS-WIDE), ResNet-50:
# BCE, averaged over the B x C entries (reduction 'mean': mlkd's choice, the
# torch default; the paper does not say how its BCE baseline is reduced).
_base_ = ['../_base_/task_losses/nuswide_resnet50.py']
model = dict(
    head=dict(loss=dict(_delete_=True, type='BinaryCrossEntropySumLoss', reduction='mean'))
)
