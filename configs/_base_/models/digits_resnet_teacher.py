# Small CIFAR-layout ResNet-18 (3x3 stem, no max-pool) for the MultiDigits demo: the teacher size,
# digits_resnet_student.py with 24 instead of 16 base channels. Trains from scratch on a CPU in
# minutes.
_base_ = ['./digits_resnet_student.py']
model = dict(backbone=dict(stem_channels=24, base_channels=24), head=dict(in_channels=192))
