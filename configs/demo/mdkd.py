# The demo's MDKD student: MLD (weight 10) plus label-pair dependencies (methods/mdkd.py);
# dependency weight 3 (a priori 1), chosen on val from 0.3 / 1 / 3 (docs/demo.md, protocol 3,
# "Loss weight of each method").
_base_ = ['../_base_/demo/multidigits_heldout_pair.py', '../_base_/methods/mdkd.py']
losses = _base_.method.distill_losses
model = dict(distill_losses=dict(mld=losses.mld, dep=dict(losses.dep, loss_weight=3)))
