# Common part of the single-label distillation pairs on CIFAR-100: mdistiller's recipe (240 epochs,
# SGD, batch 64), the dataset's own data preprocessor for both networks, the teacher's accuracy
# logged before training. A pair base adds the networks, the teacher work dir and the taps.
_base_ = [
    '../../datasets/cifar100.py',
    '../../schedules/sgd_cifar_240e.py',
    '../../default_runtime.py',
]
model = dict(
    type='SingleTeacherDistiller',
    # NaN / inf or exploding losses stop the run before the step, naming the terms.
    loss_guard=dict(divergence_factor=1e4, reference_iters=10),
    data_preprocessor=_base_.data_preprocessor,
    probe_input_size=(32, 32),
    teacher_cache=dict(dir=None, mode=None, dtype='float32'),
)  # docs/teacher_cache.md
custom_hooks = _base_.custom_hooks + [dict(type='TeacherEvalHook'), dict(type='TeacherCacheHook')]
# Leave the frozen teacher out of the optimizer (no per-parameter warnings, smaller state).
optim_wrapper = dict(constructor='FrozenAwareOptimWrapperConstructor')
