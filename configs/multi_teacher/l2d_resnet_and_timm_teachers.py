# Two teachers of different architectures and partial label sets -> the demo's student, L2D from
# each: the demo's ResNet on digits 0-6 (`low`) and timm's resnet18 on digits 3-9 (`high`, trained
# first with `tools/train.py configs/multi_teacher/timm_teacher_digits3to9.py`).
_base_ = ['../_base_/pairs/multi_teacher/demo.py']
high = dict(
    _base_.high,
    network='{{fileDirname}}/timm_teacher_digits3to9.py',
    ckpt='work_dirs/timm_teacher_digits3to9',
)
model = dict(teachers=dict(low=dict(_base_.low, **_base_.l2d), high=dict(high, **_base_.l2d)))
