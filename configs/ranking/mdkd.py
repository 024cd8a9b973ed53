# MDKD on the ranking benchmark: MLD plus label-pair dependencies (methods/mdkd.py), both weights
# 3 x the base's (MLD 30, dependencies 3; the grid's edge), chosen on val (docs/benchmarks/ranking_search.md, "weight grids").
_base_ = ['../_base_/ranking/pair.py', '../_base_/methods/mdkd.py']
model = _base_.method
model.distill_losses.mld.loss_weight = 30.0
model.distill_losses.dep.loss_weight = 3.0
