# MultiDigits student-size CIFAR-layout ResNet-18 with an ML-Decoder head producing one embedding per
# class (the L2D protocol; L2D's LED distils these label-wise embeddings). Small decoder sizes keep
# the demo CPU-friendly.
model = dict(
    type='ImageClassifier',
    backbone=dict(type='ResNet_CIFAR', depth=18, stem_channels=8, base_channels=8,
                  out_indices=(3, )),
    neck=None,
    head=dict(
        type='MLDecoderHead',
        num_classes=10,
        in_channels=64,
        hidden_dim=32,
        num_heads=4,
        ffn_dim=64,
        dropout=0.1,
        loss=dict(type='BinaryCrossEntropySumLoss'),
    ),
)
