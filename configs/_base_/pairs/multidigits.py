# Common part of every distillation config on MultiDigits: the ML-Decoder teacher and student of
# the demo, trained with the student's recipe. Run `tools/train.py
# configs/multidigits/mldecoder_teacher.py` first (or `python tools/demo.py`), or point
# `model.teacher_ckpt` at your teacher.
_base_ = [
    '../datasets/multidigits.py',
    '../schedules/onecycle_12e_demo.py',
    '../default_runtime.py',
    '../taps/digits_resnet.py',
]
model = dict(
    type='SingleTeacherDistiller',
    # NaN / inf or exploding losses stop the run before the step, naming the terms.
    loss_guard=dict(divergence_factor=1e4, reference_iters=10),
    student='{{fileDirname}}/../../multidigits/mldecoder_student.py',
    teacher='{{fileDirname}}/../../multidigits/mldecoder_teacher.py',
    teacher_ckpt='work_dirs/mldecoder_teacher',  # its work dir: its last checkpoint
    # Stage taps (`stage1..4`) for the feature methods; recorded only when a loss reads them.
    student_taps=_base_.digits_resnet_taps,
    teacher_taps=_base_.digits_resnet_taps,
    probe_input_size=(_base_.image_size, _base_.image_size),
    # Off; `--cfg-options model.teacher_cache.dir=DIR model.teacher_cache.mode=write` (then
    # `read`) trains from stored teacher outputs, bit-identically (docs/teacher_cache.md).
    teacher_cache=dict(dir=None, mode=None, dtype='float32'),
)
custom_hooks = _base_.custom_hooks + [dict(type='TeacherEvalHook'), dict(type='TeacherCacheHook')]
default_hooks = dict(logger=dict(interval=10))
# Leave the frozen teacher out of the optimizer (no per-parameter warnings, smaller state).
optim_wrapper = dict(constructor='FrozenAwareOptimWrapperConstructor')
