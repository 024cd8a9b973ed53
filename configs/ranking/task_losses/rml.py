# The ranking student on complete labels with RML as mlkd reconstructs it (docs/methods.md §2.3;
# reduction 'mean', as in configs/task_losses/rml_coco_resnet50.py).
_base_ = ['../../_base_/ranking/full_labels.py']
model = dict(head=dict(loss=dict(_delete_=True, type='RobustMultiLabelLoss', reduction='mean')))
