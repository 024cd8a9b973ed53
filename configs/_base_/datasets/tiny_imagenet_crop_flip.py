# Tiny ImageNet (tiny_imagenet.py) with the CIFAR augmentation scaled to 64 px instead of
# mdistiller's RandomRotation(20): random crop 64 with 8 px zero padding + horizontal flip. The
# single-view pipeline of the intra-class contrastive paper's configs on Tiny ImageNet (plain
# teachers, students, distillation), so that they see the augmentation of the intra-class teacher's
# views (tiny_imagenet_anchor_positive.py). The paper does not name its augmentation: this is
# mlkd's choice.
_base_ = ['./tiny_imagenet.py']

view_augmentation = [
    dict(type='RandomCrop', crop_size=64, padding=8, padding_mode='constant', pad_val=0),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
]
train_pipeline = [dict(type='LoadImageFromFile'), *view_augmentation, dict(type='PackInputs')]
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
