# MultiDigits teacher-size CIFAR-layout ResNet-18 (24 base channels) with an ML-Decoder head:
# digits_resnet_student_mldecoder.py with twice its decoder width. Small decoder sizes keep the
# demo CPU-friendly.
_base_ = ['./digits_resnet_student_mldecoder.py']
model = dict(
    backbone=dict(stem_channels=24, base_channels=24),
    head=dict(in_channels=192, hidden_dim=64, ffn_dim=128),
)
