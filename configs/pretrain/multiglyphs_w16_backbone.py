# Pretraining of a width-16 CIFAR-layout ResNet-18 backbone on MultiGlyphs (the ranking
# benchmark's teacher, docs/benchmarks/ranking_search.md): the teacher's pretraining with this width.
_base_ = ['./multiglyphs_teacher_backbone.py']
model = dict(backbone=dict(stem_channels=16, base_channels=16), head=dict(in_channels=128))
