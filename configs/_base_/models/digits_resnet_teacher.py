# Small CIFAR-layout ResNet-18 (3x3 stem, no max-pool) for the MultiDigits demo: the teacher size.
# Trains from scratch on a CPU in minutes.
model = dict(
    type='ImageClassifier',
    backbone=dict(type='ResNet_CIFAR', depth=18, stem_channels=24, base_channels=24,
                  out_indices=(3, )),
    neck=dict(type='GlobalAveragePooling'),
    head=dict(
        type='MultiLabelLinearClsHead',
        num_classes=10,
        in_channels=192,
        loss=dict(type='BinaryCrossEntropySumLoss'),
    ),
)
