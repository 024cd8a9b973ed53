# The distiller and recipe of the two MultiDigits pairs (../multidigits.py,
# ../multidigits_single_label.py; each lists it after its dataset): the demo's 12-epoch one-cycle
# recipe and mlkd's runtime, a frozen teacher whose scores are logged before training and left out
# of the optimizer. A pair adds its networks (their configs declare their taps), the teacher's work
# dir, the probe size and the teacher-output cache, in that order (the order of the model's keys
# is part of the resolved config).
_base_ = ['../../schedules/onecycle_12e_demo.py', '../../default_runtime.py']
model = dict(
    type='SingleTeacherDistiller',
    # NaN / inf or exploding losses stop the run before the step, naming the terms.
    loss_guard=dict(divergence_factor=1e4, reference_iters=10),
)
custom_hooks = _base_.custom_hooks + [dict(type='TeacherEvalHook'), dict(type='TeacherCacheHook')]
default_hooks = dict(logger=dict(interval=10))
# Leave the frozen teacher out of the optimizer (no per-parameter warnings, smaller state).
optim_wrapper = dict(constructor='FrozenAwareOptimWrapperConstructor')
