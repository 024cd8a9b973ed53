# The SCL paper's augmentation for COCO / VOC / NUS-WIDE / CUB (Verelst et al., WACV 2023,
# supplement §A): square resize to 672, random square crop of 25-100 % of the area resized to 448,
# horizontal flip; test: square resize to 448. The crop box and flip flag travel to the model for
# SpatialConsistencyLoss. Use: `_base_ = [..., '../_base_/spml/pipelines_448.py']` and set the
# datasets' `pipeline`.
image_size = 448
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(672, 672)),
    dict(
        type='RandomResizedCropWithBox',
        scale=image_size,
        crop_ratio_range=(0.25, 1.0),
        aspect_ratio_range=(1.0, 1.0),
    ),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(
        type='PackInputs',
        meta_keys=(
            'sample_idx',
            'img_path',
            'ori_shape',
            'img_shape',
            'flip',
            'flip_direction',
            'crop_box',
        ),
    ),
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(image_size, image_size)),
    dict(type='PackInputs'),
]
