# Common part of every distillation config on MultiDigits: the ML-Decoder teacher and student of
# the demo, trained with the student's recipe (multidigits/distiller.py). Run `tools/train.py
# configs/multidigits/mldecoder_teacher.py` first (or `python tools/demo.py`), or point
# `model.teacher_ckpt` at your teacher.
_base_ = ['../datasets/multidigits.py', './multidigits/distiller.py']
model = dict(
    student='{{fileDirname}}/../../multidigits/mldecoder_student.py',
    teacher='{{fileDirname}}/../../multidigits/mldecoder_teacher.py',
    teacher_ckpt='work_dirs/mldecoder_teacher',  # its work dir: its last checkpoint
    probe_input_size=(_base_.image_size, _base_.image_size),
    # Off; `--cfg-options model.teacher_cache.dir=DIR model.teacher_cache.mode=write` (then
    # `read`) trains from stored teacher outputs, bit-identically (docs/teacher_cache.md).
    teacher_cache=dict(dir=None, mode=None, dtype='float32'),
)
