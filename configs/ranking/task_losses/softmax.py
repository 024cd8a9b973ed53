# The ranking student on complete labels with the softmax cross-entropy against the uniform
# distribution over each image's positives (the Two-way paper's 'Softmax' row), summed over the
# batch: the recipe's weight decay was set against BCE summed over the batch
# (docs/benchmarks/task_losses.md).
_base_ = ['../../_base_/ranking/full_labels.py']
model = dict(head=dict(loss=dict(_delete_=True, type='MultiLabelSoftmaxLoss', reduction='sum')))
