# Single-label distillation on MultiDigits (one digit per image; the CPU evidence of
# docs/feature_kd_multidigits.md): the demo's CIFAR ResNet-18 teacher and student with linear
# softmax heads, trained with the demo's 12-epoch one-cycle recipe. Train the teacher first:
# `python tools/train.py configs/multidigits/resnet_teacher_single_label.py`. mmpretrain's
# ResNet_CIFAR has no pre-ReLU module, so OFD has no MultiDigits config.
_base_ = ['../datasets/multidigits_single_label.py', './multidigits_common.py']
model = dict(
    student='{{fileDirname}}/../../multidigits/resnet_student_single_label.py',
    teacher='{{fileDirname}}/../../multidigits/resnet_teacher_single_label.py',
    teacher_ckpt='work_dirs/resnet_teacher_single_label',  # its work dir: its last checkpoint
    data_preprocessor=_base_.data_preprocessor,
    probe_input_size=(_base_.image_size, _base_.image_size),
)
