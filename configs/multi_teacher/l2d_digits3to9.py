# The demo's student distilled with L2D from one teacher that knows digits 3-9 (`high`): digits
# 0-2 get no distillation target, only their labels (docs/multi_teacher.md).
_base_ = ['../_base_/pairs/multi_teacher/demo.py']
model = dict(teachers=dict(high=dict(_base_.high, **_base_.l2d)), allow_uncovered_classes=True)
