# The demo's PS student: L2D's partial softmax (methods/ps.py), its weight rescaled to MultiDigits
# by the rule of docs/diagnosis.md like the other terms that grow with the class count.
_base_ = ['../_base_/demo/multidigits_heldout_pair.py', '../_base_/methods/ps.py']
model = dict(distill_losses=dict(
    ps=dict(_base_.method.distill_losses.ps, weight_reference=_base_.paper_reference)))
