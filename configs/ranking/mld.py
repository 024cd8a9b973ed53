# MLD on the ranking benchmark: L2D's one-vs-all binary KL on logits (methods/mld.py), weight 30
# (3 x the base's 10, the grid's edge), chosen on val (docs/benchmarks/ranking_search.md, "weight grids").
_base_ = ['../_base_/ranking/pair.py', '../_base_/methods/mld.py']
model = _base_.method
model.distill_losses.mld.loss_weight = 30.0
