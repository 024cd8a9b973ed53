# The ranking student on complete labels with its own task loss, BCE summed over the batch and the
# classes (the benchmark's recipe): the task-loss study's baseline.
_base_ = ['../../_base_/ranking/full_labels.py']
