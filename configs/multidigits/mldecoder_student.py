# MultiDigits multi-label classifier, student size, ML-Decoder head (the nets of the distillation demo).
_base_ = [
    '../_base_/models/digits_resnet_student_mldecoder.py',
    '../_base_/datasets/multidigits.py',
    '../_base_/schedules/onecycle_12e_demo.py',
    '../_base_/default_runtime.py',
]
default_hooks = dict(logger=dict(interval=10))
