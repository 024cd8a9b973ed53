# single_label/cifar100.py on Tiny ImageNet (64 x 64 probe): mdistiller's recipe, the dataset's own
# data preprocessor for both networks, the teacher's accuracy logged before training.
_base_ = [
    '../../datasets/tiny_imagenet.py',
    '../../schedules/sgd_cifar_240e.py',
    '../../default_runtime.py',
]
model = dict(
    type='SingleTeacherDistiller',
    # NaN / inf or exploding losses stop the run before the step, naming the terms.
    loss_guard=dict(divergence_factor=1e4, reference_iters=10),
    data_preprocessor=_base_.data_preprocessor,
    probe_input_size=(64, 64),
    teacher_cache=dict(dir=None, mode=None, dtype='float32'),
)  # docs/teacher_cache.md
custom_hooks = _base_.custom_hooks + [dict(type='TeacherEvalHook'), dict(type='TeacherCacheHook')]
optim_wrapper = dict(constructor='FrozenAwareOptimWrapperConstructor')  # teacher left out
