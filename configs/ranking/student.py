# The ranking benchmark's plain student: CIFAR-layout ResNet-18 of width 16 with a smaller
# ML-Decoder head than the teacher's (d = 56, no dropout), backbone from the bundled MultiGlyphs
# pretraining.
_base_ = [
    '../_base_/models/digits_resnet_w16_mldecoder_pretrained.py',
    '../_base_/ranking/stage.py',
]
model = dict(head=dict(num_classes=_base_.num_classes, hidden_dim=56, ffn_dim=112, dropout=0.0))
