# The demo's L2D student: 10 * MLD + LED (100 * CD + 1000 * ID), rescaled to MultiDigits by the
# rule of docs/diagnosis.md (weight_reference), LED scaled by 0.1, chosen on val from
# 0.1 / 0.3 / 1 (docs/demo.md, protocol 3, "Loss weight of each method"). l2d_paper_weights.py
# applies the paper's weights literally.
_base_ = ['../_base_/demo/multidigits_heldout_pair.py', '../_base_/methods/l2d.py']
losses = _base_.method.distill_losses
model = dict(
    distill_losses=dict(
        mld=dict(losses.mld, weight_reference=_base_.paper_reference),
        led=dict(losses.led, weight_reference=_base_.paper_reference, loss_weight=0.1),
    ),
    student_taps=_base_.method.student_taps,
    teacher_taps=_base_.method.teacher_taps,
)
