# The ranking benchmark's teacher: CIFAR-layout ResNet-18 of width 24 with an ML-Decoder head
# (d = 64), backbone from the bundled MultiGlyphs pretraining; the students' recipe with its own
# schedule and its own training set: as many images as the students', another draw, clean labels
# (a teacher trained on other and better-labelled data than its student, as a pretrained one is).
_base_ = [
    '../_base_/models/digits_resnet_teacher_mldecoder_pretrained.py',
    '../_base_/ranking/stage.py',
]
model = dict(head=dict(num_classes=_base_.num_classes))
train_dataloader = dict(dataset=dict(num_samples=8000, seed=1, missed_annotation=(0.0, 0.0)))
teacher_epochs = 15
param_scheduler = [
    dict(_base_.param_scheduler[0], total_steps=teacher_epochs, end=teacher_epochs),
    dict(_base_.param_scheduler[1], total_steps=teacher_epochs, end=teacher_epochs),
]
train_cfg = dict(max_epochs=teacher_epochs, val_interval=teacher_epochs)
