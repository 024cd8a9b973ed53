# DigitObjects study intra-class contrastive teacher: teacher.py's network trained with
# CE + 0.02·L_intra (methods/intra_class_teacher.py) on two views per image, the same recipe.
_base_ = [
    '../../_base_/datasets/digit_objects_anchor_positive.py',
    '../../_base_/schedules/onecycle_12e_demo.py',
    '../../_base_/default_runtime.py',
    '../../_base_/methods/intra_class_teacher.py',
]
model = dict(_base_.method, classifier='{{fileDirname}}/teacher.py', probe_input_size=(32, 32))
default_hooks = dict(logger=dict(interval=10))
