# ImageNet-1K val with the multi-label ReaL labels (46,837 images with at least one label), for the
# multi-label evaluation of an ImageNet classifier (Verelst et al., WACV 2023, section 4.3): resize
# the short side to 256, centre crop 224 (their appendix A). Evaluation only: use as val/test
# dataloader. ImageNet mean / std (imagenet_preprocessor.py).
_base_ = ['./imagenet_preprocessor.py']
num_classes = 1000
image_size = 224

data_preprocessor = dict(_base_.imagenet_preprocessor, num_classes=num_classes)
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
