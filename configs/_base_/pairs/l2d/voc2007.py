# Common part of the L2D-protocol distillation pairs on Pascal VOC 2007 (pairs/voc_*.py): the
# student's recipe (that of recipes/voc2007_l2d.py), the teacher's scores logged before training,
# the frozen teacher left out of the optimizer (no per-parameter warnings, smaller state).
_base_ = [
    '../../datasets/voc2007_l2d.py',
    '../../schedules/onecycle_80e.py',
    '../../default_runtime.py',
]
custom_hooks = _base_.custom_hooks + [dict(type='TeacherEvalHook'), dict(type='TeacherCacheHook')]
optim_wrapper = dict(constructor='FrozenAwareOptimWrapperConstructor')
