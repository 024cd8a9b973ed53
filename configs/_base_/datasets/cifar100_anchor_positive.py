# CIFAR-100 with two views per training image for the intra-class contrastive teacher of
# "Enriching Knowledge Distillation with Intra-Class Contrastive Learning" (anonymous ICLR
# submission): the anchor x and its positive x+ are two independent draws of the standard CIFAR
# augmentation of cifar100.py (random crop 32 with 4 px zero padding + horizontal flip), made by
# AnchorPositiveViews; under keyed sampling the anchor is exactly the sample cifar100.py gives. The
# paper says only that x+ is "an augmented version of x" and does not name its augmentation: this
# is mlkd's choice, the common CIFAR-KD one. MultiViewClsDataPreprocessor normalises each view
# (CIFAR-100 mean / std) and hands the model `inputs = [anchor, positive]`, two [B, 3, 32, 32]
# tensors, with integer labels (single-label: no one-hot). Evaluation batches stay single-view.
# Batch 256 images (512 views) per GPU: the paper's teacher batch on one GPU.
_base_ = ['./cifar100.py']

train_pipeline = [
    dict(type='AnchorPositiveViews', transforms=_base_.train_pipeline[:-1]),  # crop + flip
    dict(type='PackInputs'),
]
# The base dataloader captured the base pipeline when it was parsed; point it at this one.
train_dataloader = dict(batch_size=256, dataset=dict(pipeline=train_pipeline))
data_preprocessor = dict(type='MultiViewClsDataPreprocessor', to_onehot=False)
