# The recipe of every L2D-protocol distillation pair (coco2014.py, nuswide.py, voc2007.py add the
# dataset): the student's one-cycle 80-epoch schedule, the teacher's scores logged before training,
# the frozen teacher left out of the optimizer (no per-parameter warnings, smaller state).
_base_ = ['../../schedules/onecycle_80e.py', '../../default_runtime.py']
custom_hooks = _base_.custom_hooks + [dict(type='TeacherEvalHook'), dict(type='TeacherCacheHook')]
optim_wrapper = dict(constructor='FrozenAwareOptimWrapperConstructor')
