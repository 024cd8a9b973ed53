# The demo's MLD student: L2D's logit term alone (the rule keeps its weight at B = 64); weight 10
# (kept), chosen on val from 3 / 10 / 30 (docs/demo.md, protocol 3, "Loss weight of each method").
_base_ = ['../_base_/demo/multidigits_heldout_pair.py', '../_base_/methods/mld.py']
model = dict(
    distill_losses=dict(
        mld=dict(_base_.method.distill_losses.mld, weight_reference=_base_.paper_reference)
    )
)
