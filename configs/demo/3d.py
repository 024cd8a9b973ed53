# The demo's 3D student: the paper's weights (alpha = 100 for L_PD, beta = 10 for L_NDD) rescaled
# to MultiDigits by the rule of docs/diagnosis.md (weight_reference); alpha 10 (a priori 100),
# chosen on val from 10 / 30 / 100 (docs/demo.md, protocol 3, "Loss weight of each method").
# 3d_paper_weights.py applies the paper's weights literally.
_base_ = ['../_base_/demo/multidigits_heldout_pair.py', '../_base_/methods/3d.py']
losses = _base_.method.distill_losses
model = dict(
    distill_losses=dict(
        pd=dict(losses.pd, weight_reference=_base_.paper_reference, loss_weight=10),
        ndd=dict(losses.ndd, weight_reference=_base_.paper_reference),
    )
)
