# MultiDigits student-size CIFAR-layout ResNet-18 with an ML-Decoder head producing one embedding per
# class (the L2D protocol; L2D's LED distils these label-wise embeddings). Small decoder sizes keep
# the demo CPU-friendly.
model = dict(
    type='ImageClassifier',
    backbone=dict(type='ResNet_CIFAR', depth=18, stem_channels=16, base_channels=16,
                  out_indices=(3, )),
    neck=None,
    head=dict(
        type='MLDecoderHead',
        num_classes=10,
        in_channels=128,
        hidden_dim=64,
        num_heads=4,
        ffn_dim=128,
        dropout=0.1,
        loss=dict(type='BinaryCrossEntropySumLoss'),
    ),
)
