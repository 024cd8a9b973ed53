# Tiny ImageNet (200 classes, 64x64) with two views per training image for the intra-class
# contrastive teacher of "Enriching Knowledge Distillation with Intra-Class Contrastive Learning"
# (anonymous ICLR submission): the anchor x and its positive x+ are two independent draws of random
# crop 64 with 8 px zero padding + horizontal flip (the CIFAR augmentation scaled to 64 px), made by
# AnchorPositiveViews after one image load (`view_augmentation` of tiny_imagenet_crop_flip.py, the
# single-view pipeline of the same crop + flip). The paper does not name its augmentation: this is
# mlkd's choice. It differs from tiny_imagenet.py's single-view pipeline (mdistiller's
# RandomRotation(20) + flip); the plain teachers and students of configs/intra_class use
# tiny_imagenet_crop_flip.py, whose single view is the anchor here. MultiViewClsDataPreprocessor
# normalises each view (BGR -> RGB, Tiny ImageNet mean / std) and hands the model
# `inputs = [anchor, positive]`, two [B, 3, 64, 64] tensors, with integer labels. Evaluation
# batches stay single-view.
# Batch 256 images (512 views) per GPU: the paper's teacher batch on one GPU.
_base_ = ['./tiny_imagenet_crop_flip.py']

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='AnchorPositiveViews', transforms=_base_.view_augmentation),
    dict(type='PackInputs'),
]
train_dataloader = dict(batch_size=256, dataset=dict(pipeline=train_pipeline))
data_preprocessor = dict(type='MultiViewClsDataPreprocessor', to_onehot=False)
