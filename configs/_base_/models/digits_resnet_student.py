# Small CIFAR-layout ResNet-18 (3x3 stem, no max-pool) for the MultiDigits demo: the student size.
# Trains from scratch on a CPU in minutes.
_base_ = ['../taps/digits_resnet.py']
model = dict(
    type='ImageClassifier',
    backbone=dict(
        type='ResNet_CIFAR', depth=18, stem_channels=16, base_channels=16, out_indices=(3,)
    ),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(
        type='MultiLabelLinearClsHead',
        num_classes=10,
        in_channels=128,
        loss=dict(type='BinaryCrossEntropySumLoss'),
    ),
)
taps = _base_.digits_resnet_taps  # what a distiller may record of this network
