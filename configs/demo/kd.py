# The demo's KD student: per-class sigmoid binary KL at temperature 4 (methods/kd.py). Weight 30 (a
# priori 10), chosen on val from 3 / 10 / 30 (docs/demo.md, "Loss weight of each method").
_base_ = ['../_base_/demo/multidigits_heldout_pair.py', '../_base_/methods/kd.py']
model = dict(distill_losses=dict(kd=dict(_base_.method.distill_losses.kd, loss_weight=30)))
