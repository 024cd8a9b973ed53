# 3D with the supplement's weak / strong augmentations as two views: the teacher sees the weak view
# (flip), the student the strong one (flip + cutout + RandAugment); the same views as
# configs/_base_/datasets/coco2014_two_views.py. The default 3D configs use one shared view
# (docs/methods.md section 4.4.5, switch `views`); this config is the alternative.
_base_ = ['../_base_/pairs/coco_resnet101_to_resnet34.py', '../_base_/methods/3d.py']
model = dict(**_base_.method, views=dict(teacher=0, student=1))
data_preprocessor = dict(type='MultiViewClsDataPreprocessor')
train_dataloader = dict(
    dataset=dict(
        pipeline=[
            dict(type='LoadImageFromFile', imdecode_backend='pillow'),
            dict(
                type='Resize',
                scale=(224, 224),
                keep_ratio=False,
                backend='pillow',
                interpolation='bilinear',
            ),
            dict(
                type='MultiView',
                num_views=[1, 1],
                transforms=[
                    [dict(type='RandomFlip', prob=0.5, direction='horizontal')],
                    [
                        dict(type='RandomFlip', prob=0.5, direction='horizontal'),
                        _base_.cutout,
                        _base_.rand_augment,
                    ],
                ],
            ),
            dict(type='PackInputs'),
        ]
    )
)
