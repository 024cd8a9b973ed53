# Every distilled stage of the ranking benchmark: the plain student (ranking/student.py) trained by
# the students' recipe beside the frozen teacher (ranking/teacher.py), each evaluation scoring the
# student's fidelity to the teacher (DistillFidelity; the teacher runs live on val and test, its
# cache holds training batches only). A leaf adds its method: `model = _base_.method`.
_base_ = ['./stage.py']
model = dict(
    type='SingleTeacherDistiller',
    student='{{fileDirname}}/../../ranking/student.py',
    teacher='{{fileDirname}}/../../ranking/teacher.py',
    teacher_ckpt='work_dirs/ranking_teacher',  # the teacher's work dir: its last checkpoint
    probe_input_size=(_base_.image_size, _base_.image_size),
    # Off; `--cfg-options model.teacher_cache.dir=DIR model.teacher_cache.mode=write` (then
    # `read`) trains from stored teacher outputs, bit-identically (docs/teacher_cache.md).
    teacher_cache=dict(dir=None, mode=None, dtype='float32'),
)
custom_hooks = _base_.custom_hooks + [dict(type='TeacherEvalHook'), dict(type='TeacherCacheHook')]
# Leave the frozen teacher out of the optimizer (no per-parameter warnings, smaller state).
optim_wrapper = dict(constructor='FrozenAwareOptimWrapperConstructor')
val_evaluator = [_base_.val_evaluator, dict(type='DistillFidelity')]
test_evaluator = val_evaluator
# The setting the papers' weights were tuned in (batch 64, 80 COCO classes, BCE-sum task loss):
# a loss given `weight_reference=paper_reference` rescales its weight to this one (diagnosis.md §1).
paper_reference = dict(batch_size=64, num_classes=80)
