# The ranking student on complete labels with WARP (margin 1, exact ranks; reduction 'mean', as
# in configs/task_losses/warp_coco_resnet50.py).
_base_ = ['../../_base_/ranking/full_labels.py']
model = dict(head=dict(loss=dict(_delete_=True, type='WARPLoss', reduction='mean')))
