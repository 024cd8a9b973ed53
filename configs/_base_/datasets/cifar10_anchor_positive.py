# CIFAR-10 with two views per training image (anchor x, positive x+) for the intra-class
# contrastive teacher: cifar100_anchor_positive.py's pipeline (two independent draws of random crop
# 32 pad 4 + horizontal flip; the paper does not name its augmentation) on cifar10.py (10 classes,
# CIFAR-10 mean / std). Batch 256 images (512 views) per GPU: the paper's teacher batch on one GPU.
_base_ = ['./cifar10.py']

train_pipeline = [
    dict(type='AnchorPositiveViews', transforms=_base_.train_pipeline[:-1]),  # crop + flip
    dict(type='PackInputs'),
]
train_dataloader = dict(batch_size=256, dataset=dict(pipeline=train_pipeline))
data_preprocessor = dict(type='MultiViewClsDataPreprocessor', to_onehot=False)
