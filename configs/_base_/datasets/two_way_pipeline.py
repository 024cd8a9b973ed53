# Shared data settings of the Two-way loss paper (Kobayashi, "Two-way Multi-Label Loss", CVPR 2023;
# docs/methods.md §2.1, official code) for MS-COCO 2014 and NUS-WIDE; each dataset config sets
# num_classes and the datasets only.
#
# * Train: RandomResizedCrop to 224 with torchvision's defaults (area 8-100 %, aspect 3/4-4/3),
#   horizontal flip, ColorJitter(brightness, contrast, saturation 0.4), AlexNet-style PCA lighting
#   (std 0.1; ImageNet eigen-values and vectors in 0-255 pixel units, RGB order).
# * Test: resize the shorter side to 256, centre crop 224.
# * ImageNet mean / std on RGB inputs; 128 images per GPU (global batch 512 on 4 GPUs).
# * Metrics: mAP@class and mAP@sample (SampleMAP; samples / classes without a positive excluded).
_base_ = ['./imagenet_preprocessor.py']
num_classes = 80
image_size = 224

data_preprocessor = dict(_base_.imagenet_preprocessor, num_classes=num_classes)

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='RandomResizedCrop', scale=image_size),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(type='ColorJitter', brightness=0.4, contrast=0.4, saturation=0.4),
    dict(
        type='Lighting',
        eigval=[55.46, 4.794, 1.148],
        eigvec=[[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140], [-0.5836, -0.6948, 0.4203]],
        alphastd=0.1,
        to_rgb=True,
    ),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='ResizeEdge', scale=256, edge='short'),
    dict(type='CenterCrop', crop_size=image_size),
    dict(type='PackInputs'),
]

# A dataset config sets the datasets: its own fields, then the split settings below (pipeline;
# pipeline and test mode), as
#   train_dataloader = dict(
#       dataset=dict(__dataset, _delete_=True, **_base_.train_dataloader.dataset)
#   )
# and likewise for val (`_delete_` keeps the dataset's fields ahead of the split settings in the
# resolved config, the order of the datasets' own keyword arguments).
train_dataloader = dict(
    batch_size=128,
    num_workers=8,
    persistent_workers=True,
    sampler=dict(type='EpochKeyedSampler', shuffle=True),
    dataset=dict(pipeline=train_pipeline),
)
val_dataloader = dict(
    train_dataloader,
    sampler=dict(type='EpochKeyedSampler', shuffle=False),
    dataset=dict(pipeline=test_pipeline, test_mode=True),
)
test_dataloader = val_dataloader

val_evaluator = dict(type='SampleMAP')
test_evaluator = val_evaluator
