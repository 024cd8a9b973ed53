# Pretraining of the demo student's backbone (CIFAR-layout ResNet-18, width 8) on MultiGlyphs:
# the teacher's pretraining with the student's backbone.
_base_ = ['./multiglyphs_teacher_backbone.py']
model = dict(backbone=dict(stem_channels=8, base_channels=8), head=dict(in_channels=64))
