# The ranking student on complete labels with the Two-way loss (T_P 4, T_N 1; Kobayashi, CVPR
# 2023). It has only its paper's means over sets; weighted by the batch size (64), its sample-wise
# term is a sum over the batch, the scale against which the recipe's weight decay was set (BCE
# summed over the batch; docs/benchmarks/task_losses.md). The weight multiplies its class-wise
# term (a mean over the classes) by 64 as well: the two terms keep the paper's balance.
_base_ = ['../../_base_/ranking/full_labels.py']
model = dict(head=dict(loss=dict(_delete_=True, type='TwoWayMultiLabelLoss', loss_weight=64.0)))
