# The demo's student distilled with L2D from two teachers of partial label sets: `low` (digits
# 0-6) and `high` (digits 3-9); each distils the classes it knows, so 3-6 get a target from both
# (docs/multi_teacher.md).
_base_ = ['../_base_/pairs/multi_teacher/demo.py']
model = dict(
    teachers=dict(low=dict(_base_.low, **_base_.l2d), high=dict(_base_.high, **_base_.l2d))
)
