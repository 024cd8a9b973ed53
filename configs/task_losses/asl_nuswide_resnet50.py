# Kobayashi (CVPR 2023) Table C (NUS-WIDE), ResNet-50:
# ASL with its paper setting (gamma_pos 0, gamma_neg 4, clip 0.05) and reference sum
# reduction (the paper does not say which settings its ASL row used).
_base_ = ['../_base_/task_losses/nuswide_resnet50.py']
model = dict(head=dict(loss=dict(_delete_=True, type='AsymmetricMultiLabelLoss')))
