# Plain KD on the ranking benchmark: per-class sigmoid binary KL (methods/kd.py) at temperature 2
# and weight 30 (3 x the base's 10, the grid's edge), chosen on val (docs/benchmarks/ranking_search.md, "weight grids").
_base_ = ['../_base_/ranking/pair.py', '../_base_/methods/kd.py']
model = _base_.method
model.distill_losses.kd.temperature = 2.0
model.distill_losses.kd.loss_weight = 30.0
