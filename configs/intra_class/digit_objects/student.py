# DigitObjects study student: the teacher's network at width 8 (0.18 M parameters), softmax head.
_base_ = ['./teacher.py']
model = dict(backbone=dict(stem_channels=8, base_channels=8), head=dict(in_channels=64))
