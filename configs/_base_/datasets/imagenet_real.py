# ImageNet-1K val with the multi-label ReaL labels (46,837 images with at least one label), for the
# multi-label evaluation of an ImageNet classifier (Verelst et al., WACV 2023, section 4.3): resize
# the short side to 256, centre crop 224 (their appendix A). Evaluation only: use as val/test
# dataloader.
num_classes = 1000
image_size = 224

data_preprocessor = dict(  # ImageNet mean / std, RGB; builds the 1 / 0 / -1 target once per batch
    type='MultiLabelDataPreprocessor',
    num_classes=num_classes,
    mean=[123.675, 116.28, 103.53],
    std=[58.395, 57.12, 57.375],
    to_rgb=True,
    to_onehot=True,
)
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='ResizeEdge', scale=256, edge='short'),
    dict(type='CenterCrop', crop_size=image_size),
    dict(type='PackInputs'),
]
val_dataloader = dict(
    batch_size=64,
    num_workers=4,
    persistent_workers=True,
    sampler=dict(type='EpochKeyedSampler', shuffle=False),
    dataset=dict(
        type='ImageNetReaL',
        data_root='data/imagenet',
        real_file='real.json',
        data_prefix='val',
        pipeline=test_pipeline,
    ),
)
test_dataloader = val_dataloader
val_evaluator = dict(type='MultiLabelMetrics', conventions=('threshold',))
test_evaluator = val_evaluator
