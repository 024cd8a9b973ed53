# Shared data settings of the spatial consistency loss paper (Verelst et al., "Spatial Consistency
# Loss for Training Multi-Label Classifiers from Single-Label Annotations", WACV 2023; appendix A)
# for MS-COCO 2014, Pascal VOC 2012, NUS-WIDE and CUB-200-2011; each dataset config sets
# num_classes and the datasets and says nothing else.
#
# * Train: resize to 672 x 672 (aspect not kept), a random *square* crop of 25-100 % of the area
#   (torchvision RandomResizedCrop semantics; aspect ratio fixed at 1) resized to 448 x 448, and a
#   random horizontal flip. The crop is `RandomResizedCropWithBox` (mlkd/datasets/transforms/):
#   RandomResizedCrop's draws and output plus the crop box, packed with the flip flag for the
#   spatial consistency loss (SCL); every method of a table sees the same augmentation.
# * Test: resize to 448 x 448.
# * ImageNet mean / std on RGB inputs (the ImageNet-pretrained ResNet-50 of Verelst et al.).
# * Training samples carry the unobserved labels (gt_label_ignored: -1 in the target built by the
#   data preprocessor) and the clean labels (gt_label_full: gt_full) of the observed-label switch
#   (mlkd/datasets/observed_labels.py); validation keeps the full labels.
_base_ = ['./imagenet_preprocessor.py']
# After `_base_`: mmengine reads a config that imports before it as a lazy-import config. The
# module is not a config value (mmengine leaves modules out).
from mlkd.datasets import transforms  # noqa: E402

num_classes = 80
image_size = 448
resize_size = 672

data_preprocessor = dict(_base_.imagenet_preprocessor, num_classes=num_classes)

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(resize_size, resize_size), keep_ratio=False),
    dict(
        type='RandomResizedCropWithBox',
        scale=image_size,
        crop_ratio_range=(0.25, 1.0),
        aspect_ratio_range=(1.0, 1.0),
    ),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(
        type='PackInputs',
        algorithm_keys=('gt_label_ignored', 'gt_label_full'),
        meta_keys=transforms.CROP_META_KEYS,  # mmpretrain's default keys and crop_box
    ),
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(image_size, image_size), keep_ratio=False),
    dict(type='PackInputs'),
]

# A dataset config sets the datasets: its own fields, then the split settings below, as
#   train_dataloader = dict(
#       dataset=dict(__dataset, _delete_=True, **_base_.train_dataloader.dataset)
#   )
# and likewise for val (`_delete_` keeps the dataset's fields ahead of the split settings in the
# resolved config, the order of the datasets' own keyword arguments).
train_dataloader = dict(
    batch_size=8,
    num_workers=4,
    persistent_workers=True,
    sampler=dict(type='EpochKeyedSampler', shuffle=True),
    # One observed positive per training image, drawn uniformly (seed 1200, as Cole et al.'s
    # generator); coco2014_spml_partial{75,40}.py observe more.
    dataset=dict(observed_labels=dict(mode='single_positive', seed=1200), pipeline=train_pipeline),
)
val_dataloader = dict(
    train_dataloader,
    batch_size=32,
    sampler=dict(type='EpochKeyedSampler', shuffle=False),
    dataset=dict(pipeline=test_pipeline, test_mode=True),
)
test_dataloader = val_dataloader

val_evaluator = dict(type='MultiLabelMetrics', conventions=('threshold',))
test_evaluator = val_evaluator
