# The distiller and recipe shared by the MultiDigits pairs (multidigits.py,
# multidigits_single_label.py): the demo's 12-epoch one-cycle recipe, the teacher's scores logged
# before training, the frozen teacher left out of the optimizer (no per-parameter warnings, smaller
# state). Each pair adds its dataset, its teacher and student configs and the teacher's work dir.
_base_ = ['../schedules/onecycle_12e_demo.py', '../default_runtime.py', '../taps/digits_resnet.py']
model = dict(
    type='SingleTeacherDistiller',
    # NaN / inf or exploding losses stop the run before the step, naming the terms.
    loss_guard=dict(divergence_factor=1e4, reference_iters=10),
    # Stage taps (`stage1..4`) for the feature methods; recorded only when a loss reads them.
    student_taps=_base_.digits_resnet_taps,
    teacher_taps=_base_.digits_resnet_taps,
    # Off; `--cfg-options model.teacher_cache.dir=DIR model.teacher_cache.mode=write` (then
    # `read`) trains from stored teacher outputs, bit-identically (docs/teacher_cache.md).
    teacher_cache=dict(dir=None, mode=None, dtype='float32'),
)
custom_hooks = _base_.custom_hooks + [dict(type='TeacherEvalHook'), dict(type='TeacherCacheHook')]
default_hooks = dict(logger=dict(interval=10))
optim_wrapper = dict(constructor='FrozenAwareOptimWrapperConstructor')
