# Pretraining of the demo teacher's backbone (CIFAR-layout ResNet-18, width 24) on MultiGlyphs,
# standing in for the papers' ImageNet pretraining: a linear head on pooled features, 12 glyph
# classes, PyTorch's default initialisation. `tools/pretrain.py` runs it and ships the backbone
# as mlkd/weights/multiglyphs_teacher_backbone.pth (docs/demo.md, "Pretraining").
_base_ = [
    '../_base_/models/digits_resnet_teacher.py',
    '../_base_/datasets/multiglyphs.py',
    '../_base_/schedules/onecycle_12e_demo.py',
    '../_base_/default_runtime.py',
]
model = dict(
    backbone=dict(init_cfg=None, zero_init_residual=False),
    head=dict(num_classes=_base_.num_classes),
)
schedule_epochs = 6
param_scheduler = [
    dict(_base_.param_scheduler[0], total_steps=schedule_epochs, end=schedule_epochs),
    dict(_base_.param_scheduler[1], total_steps=schedule_epochs, end=schedule_epochs),
]
train_cfg = dict(max_epochs=schedule_epochs, val_interval=schedule_epochs)
default_hooks = dict(logger=dict(interval=10))
