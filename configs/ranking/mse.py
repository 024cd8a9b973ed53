# MSE on the ranking benchmark: squared error between student and teacher probabilities, weight
# 30 (3 x the base's 10, the grid's edge), chosen on val (docs/benchmarks/ranking_search.md, "weight grids").
_base_ = ['../_base_/ranking/pair.py', '../_base_/methods/mse.py']
model = _base_.method
model.distill_losses.mse.loss_weight = 30.0
