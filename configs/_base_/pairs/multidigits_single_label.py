# Single-label distillation on MultiDigits (one digit per image; the CPU evidence of
# docs/feature_kd_multidigits.md): the demo's CIFAR ResNet-18 teacher and student with linear
# softmax heads, trained with the demo's 12-epoch one-cycle recipe (multidigits/distiller.py).
# Train the teacher first:
# `python tools/train.py configs/multidigits/resnet_teacher_single_label.py`.
_base_ = ['../datasets/multidigits_single_label.py', './multidigits/distiller.py']
model = dict(
    student='{{fileDirname}}/../../multidigits/resnet_student_single_label.py',
    teacher='{{fileDirname}}/../../multidigits/resnet_teacher_single_label.py',
    teacher_ckpt='work_dirs/resnet_teacher_single_label',  # its work dir: its last checkpoint
    data_preprocessor=_base_.data_preprocessor,
    # The networks' stage taps (`stage1..4`, their model base) serve the feature methods;
    # mmpretrain's ResNet_CIFAR has no pre-ReLU module, so OFD has no MultiDigits config.
    probe_input_size=(_base_.image_size, _base_.image_size),
    # Off; `--cfg-options model.teacher_cache.dir=DIR model.teacher_cache.mode=write` (then
    # `read`) trains from stored teacher outputs, bit-identically (docs/teacher_cache.md).
    teacher_cache=dict(dir=None, mode=None, dtype='float32'),
)
