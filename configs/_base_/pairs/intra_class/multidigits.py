# The distillation pair of the bundled-data study (recipes/intra_class/multidigits.py): teacher
# configs/intra_class/multidigits/teacher.py (plain) or teacher_intra_class.py, student
# student.py; the frozen teacher left out of the optimizer, its accuracy logged before training.
_base_ = ['../../recipes/intra_class/multidigits.py']
model = dict(
    type='SingleTeacherDistiller',
    # NaN / inf or exploding losses stop the run before the step, naming the terms.
    loss_guard=dict(divergence_factor=1e4, reference_iters=10),
    data_preprocessor=_base_.data_preprocessor,
    probe_input_size=(32, 32),
    teacher='{{fileDirname}}/../../../intra_class/multidigits/teacher.py',
    student='{{fileDirname}}/../../../intra_class/multidigits/student.py',
    teacher_ckpt='work_dirs/intra_class/multidigits/teacher',
)
intra_class_teacher_ckpt = 'work_dirs/intra_class/multidigits/teacher_intra_class'
custom_hooks = _base_.custom_hooks + [dict(type='TeacherEvalHook')]
optim_wrapper = dict(constructor='FrozenAwareOptimWrapperConstructor')
