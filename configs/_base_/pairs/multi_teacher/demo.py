# The demo's student (configs/demo/student.py) distilled by MultiTeacherDistiller from teachers of
# partial label sets, on the demo's data (docs/multi_teacher.md): the teachers are the demo's
# teacher trained on digits 0-6 (`low`) and on digits 3-9 (`high`), each trained first by its
# config in configs/multi_teacher/. A leaf picks its teachers and gives each its losses and taps:
#   model = dict(teachers=dict(low=dict(_base_.low, **_base_.l2d), ...))
_base_ = [
    '../../demo/multidigits_heldout_pair.py',
    '../../datasets/multidigits_digit_subsets.py',
    '../../methods/l2d.py',
]
model = dict(
    _delete_=True,
    type='MultiTeacherDistiller',
    loss_guard=_base_.model.loss_guard,
    student=_base_.model.student,
    # The student's classes: each teacher's are mapped onto them by name.
    classes=_base_.digits,
    teachers=dict(),
    label_targets='all',
    probe_input_size=_base_.model.probe_input_size,
)
# Without the demo pair's DistillFidelity: it compares the student with one teacher's scores of every
# class (model.fidelity_teacher), and no teacher here predicts every digit.
val_evaluator = [_base_.val_evaluator[0]]
test_evaluator = val_evaluator
# Off; `--cfg-options model.teachers.<name>.cache.dir=DIR model.teachers.<name>.cache.mode=write`
# (then `read`) trains from stored outputs of that teacher (docs/teacher_cache.md).
no_cache = dict(dir=None, mode=None, dtype='float32')
low = dict(
    network='{{fileDirname}}/../../../multi_teacher/teacher_digits0to6.py',
    ckpt='work_dirs/teacher_digits0to6',  # its work dir: its last checkpoint
    classes=_base_.digits_0_to_6,
    cache=no_cache,
)
high = dict(
    network='{{fileDirname}}/../../../multi_teacher/teacher_digits3to9.py',
    ckpt='work_dirs/teacher_digits3to9',
    classes=_base_.digits_3_to_9,
    cache=no_cache,
)
# L2D with the demo's weights (configs/demo/l2d.py: MLD 10 and LED 0.1 by the rescaling rule,
# chosen on val for one teacher of every class), for each teacher: `dict(low, **l2d)`.
l2d = dict(
    distill_losses=dict(
        mld=dict(_base_.method.distill_losses.mld, weight_reference=_base_.paper_reference),
        led=dict(
            _base_.method.distill_losses.led,
            weight_reference=_base_.paper_reference,
            loss_weight=0.1,
        ),
    ),
    student_taps=_base_.method.student_taps,
    teacher_taps=_base_.method.teacher_taps,
)
