# 3D on the ranking benchmark: the paper's alpha = 100 (L_PD) and beta = 10 (L_NDD), rescaled from
# the paper's setting (batch 64, 80 classes) to this one by the rule of docs/diagnosis.md §1.
_base_ = ['../_base_/ranking/pair.py', '../_base_/methods/3d.py']
losses = _base_.method.distill_losses
model = dict(
    distill_losses=dict(
        pd=dict(losses.pd, weight_reference=_base_.paper_reference),
        ndd=dict(losses.ndd, weight_reference=_base_.paper_reference),
    )
)
