# L2D on the ranking benchmark: 10 * MLD + LED (100 * CD + 1000 * ID) on the ML-Decoder's
# label-wise embeddings, rescaled from the paper's setting to this one (docs/diagnosis.md §1).
_base_ = ['../_base_/ranking/pair.py', '../_base_/methods/l2d.py']
losses = _base_.method.distill_losses
model = dict(
    distill_losses=dict(
        mld=dict(losses.mld, weight_reference=_base_.paper_reference),
        led=dict(losses.led, weight_reference=_base_.paper_reference),
    ),
    student_taps=_base_.method.student_taps,
    teacher_taps=_base_.method.teacher_taps,
)
