# The distillation pair of the 100-class bundled study (recipes/intra_class/digit_objects.py):
# teacher configs/intra_class/digit_objects/teacher.py (plain) or teacher_intra_class.py, student
# student.py, the dataset's data preprocessor for both networks, the teacher's accuracy logged
# before training, the frozen teacher left out of the optimizer.
_base_ = ['../../recipes/intra_class/digit_objects.py', './distiller.py']
model = dict(
    data_preprocessor=_base_.data_preprocessor,
    probe_input_size=(32, 32),
    teacher='{{fileDirname}}/../../../intra_class/digit_objects/teacher.py',
    student='{{fileDirname}}/../../../intra_class/digit_objects/student.py',
    teacher_ckpt='work_dirs/intra_class/digit_objects/teacher',
)
intra_class_teacher_ckpt = 'work_dirs/intra_class/digit_objects/teacher_intra_class'
custom_hooks = _base_.custom_hooks + [dict(type='TeacherEvalHook')]
optim_wrapper = dict(constructor='FrozenAwareOptimWrapperConstructor')
