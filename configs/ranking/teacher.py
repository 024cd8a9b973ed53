# The ranking benchmark's teacher: CIFAR-layout ResNet-18 of width 16 with an ML-Decoder head
# (d = 64), backbone from the bundled MultiGlyphs pretraining; the students' recipe with its own
# schedule.
_base_ = [
    '../_base_/models/digits_resnet_w16_mldecoder_pretrained.py',
    '../_base_/ranking/stage.py',
]
model = dict(head=dict(num_classes=_base_.num_classes))
teacher_epochs = 15
param_scheduler = [
    dict(_base_.param_scheduler[0], total_steps=teacher_epochs, end=teacher_epochs),
    dict(_base_.param_scheduler[1], total_steps=teacher_epochs, end=teacher_epochs),
]
train_cfg = dict(max_epochs=teacher_epochs, val_interval=teacher_epochs)
