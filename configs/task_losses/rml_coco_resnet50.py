# Kobayashi (CVPR 2023) Table B (MS-COCO 2014), ResNet-50: RML (Cevikalp et al., CVPRW 2019) as
# mlkd reconstructs it (pairwise ramp ranking term + class-wise ramp term, s = -1, weight 1;
# docs/methods.md §2.3). Reduction 'mean' (each term divided by its number of pairs / labels):
# mlkd's choice, as WARP's.
_base_ = ['../_base_/task_losses/coco_resnet50.py']
model = dict(head=dict(loss=dict(_delete_=True, type='RobustMultiLabelLoss', reduction='mean')))
