# The distiller of the single-label pairs on CIFAR-100 and Tiny ImageNet (cifar100.py,
# tiny_imagenet.py list it after their data and schedule) with mlkd's runtime: a frozen teacher
# whose accuracy is logged before training, the teacher-output cache off unless asked for. The
# dataset's commons fill in the data preprocessor both networks use and the probe size.
_base_ = ['../../default_runtime.py']
model = dict(
    type='SingleTeacherDistiller',
    # NaN / inf or exploding losses stop the run before the step, naming the terms.
    loss_guard=dict(divergence_factor=1e4, reference_iters=10),
    data_preprocessor=dict(),
    probe_input_size=None,
    teacher_cache=dict(dir=None, mode=None, dtype='float32'),
)  # docs/teacher_cache.md
custom_hooks = _base_.custom_hooks + [dict(type='TeacherEvalHook'), dict(type='TeacherCacheHook')]
