# The distiller of every pair of configs/intra_class (the <dataset>.py commons list it after their
# recipe): a frozen teacher, the teacher-output cache off unless asked for (docs/teacher_cache.md).
model = dict(
    type='SingleTeacherDistiller',
    teacher_cache=dict(dir=None, mode=None, dtype='float32'),
    # NaN / inf or exploding losses stop the run before the step, naming the terms.
    loss_guard=dict(divergence_factor=1e4, reference_iters=10),
)
