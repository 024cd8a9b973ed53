# digit_objects.py with two views per training image for the intra-class contrastive teacher: the
# anchor and its positive are two independent draws of the training augmentation (random crop 32,
# 2 px padding), as cifar100_anchor_positive.py does for CIFAR.
_base_ = ['./digit_objects.py']
train_pipeline = [
    dict(type='AnchorPositiveViews', transforms=_base_.train_pipeline[:-1]),
    dict(type='PackInputs'),
]
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
data_preprocessor = dict(type='MultiViewClsDataPreprocessor', to_onehot=False)
