# MultiDigits student-size CIFAR-layout ResNet-18 (8 base channels) with an ML-Decoder head
# producing one embedding per class (the L2D protocol; L2D's LED distils these label-wise
# embeddings). Small decoder sizes keep the demo CPU-friendly.
_base_ = ['./digits_resnet_student.py']
model = dict(
    backbone=dict(stem_channels=8, base_channels=8),
    neck=None,
    head=dict(
        _delete_=True,
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
