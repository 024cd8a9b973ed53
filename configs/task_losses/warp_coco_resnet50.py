# Kobayashi (CVPR 2023) Table B (MS-COCO 2014), ResNet-50: WARP (Gong et al., ICLR 2014),
# margin 1, exact ranks (rank_estimate='sampled' is the paper's estimate). Reduction 'mean' (the
# objective divided by the batch's number of positive-negative pairs): mlkd's choice, the
# supplement does not say how its WARP was scaled; it keeps the gradient at the order the
# recipe's SGD learning rate was set for.
_base_ = ['../_base_/task_losses/coco_resnet50.py']
model = dict(head=dict(loss=dict(_delete_=True, type='WARPLoss', reduction='mean')))
