# DigitObjects study student: the teacher's network at width 4 (fallback 3, amendment 7 of
# configs/intra_class/README.md; candidates 1-3 used width 8), softmax head.
_base_ = ['./teacher.py']
model = dict(backbone=dict(stem_channels=4, base_channels=4), head=dict(in_channels=32))
