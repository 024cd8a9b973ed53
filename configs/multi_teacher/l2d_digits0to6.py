# The demo's student distilled with L2D from one teacher that knows digits 0-6 (`low`): digits
# 7-9 get no distillation target, only their labels (docs/multi_teacher.md).
_base_ = ['../_base_/pairs/multi_teacher/demo.py']
model = dict(teachers=dict(low=dict(_base_.low, **_base_.l2d)), allow_uncovered_classes=True)
