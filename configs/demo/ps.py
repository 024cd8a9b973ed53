# The demo's PS student: L2D's partial softmax (methods/ps.py; PartialSoftmaxLoss takes no
# weight_reference, the weight is literal). Weight 30 (a priori 10), chosen on val from 3 / 10 / 30
# (docs/demo.md, "Loss weight of each method").
_base_ = ['../_base_/demo/multidigits_heldout_pair.py', '../_base_/methods/ps.py']
model = dict(distill_losses=dict(ps=dict(_base_.method.distill_losses.ps, loss_weight=30)))
