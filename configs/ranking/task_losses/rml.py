# The ranking student on complete labels with RML as mlkd reconstructs it (docs/methods.md §2.3),
# summed over the batch (its paper's objective; the COCO config averages): the recipe's weight
# decay was set against BCE summed over the batch (docs/benchmarks/task_losses.md).
_base_ = ['../../_base_/ranking/full_labels.py']
model = dict(head=dict(loss=dict(_delete_=True, type='RobustMultiLabelLoss', reduction='sum')))
