# The ranking benchmark's plain student: CIFAR-layout ResNet-18 of width 8 with an ML-Decoder head
# (d = 32, no dropout), backbone from the bundled MultiGlyphs pretraining.
_base_ = [
    '../_base_/models/digits_resnet_student_mldecoder_pretrained.py',
    '../_base_/ranking/stage.py',
]
model = dict(head=dict(num_classes=_base_.num_classes, dropout=0.0))
