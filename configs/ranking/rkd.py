# RKD on the ranking benchmark (a feature method of the 3D paper's Table B.1): distance and angle
# relations of the pooled backbone features (methods/rkd.py: mdistiller's distance 25 and angle
# 50), weight 3 (3 x the base's 1, the grid's edge), chosen on val (docs/benchmarks/ranking_search.md, "weight grids").
_base_ = ['../_base_/ranking/pair.py', '../_base_/methods/rkd.py']
model = _base_.method
model.distill_losses.rkd.loss_weight = 3.0
