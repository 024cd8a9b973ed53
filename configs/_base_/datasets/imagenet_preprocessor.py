# The data preprocessor of the datasets that ImageNet-pretrained networks train or are evaluated on
# (imagenet_real.py, spml_pipeline.py, two_way_pipeline.py): ImageNet-1K's channel mean / std (0-255
# pixel units), RGB; builds the 1 / 0 / -1 target once per batch. A dataset config sets
#   data_preprocessor = dict(_base_.imagenet_preprocessor, num_classes=num_classes)
# (A name with two leading underscores stays out of the config.)
__mean_std = dict(mean=[123.675, 116.28, 103.53], std=[58.395, 57.12, 57.375])
imagenet_preprocessor = dict(
    type='MultiLabelDataPreprocessor', num_classes=None, **__mean_std, to_rgb=True, to_onehot=True
)
