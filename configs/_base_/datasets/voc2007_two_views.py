# Pascal VOC 2007 with the 3D paper's two views per training image (methods.md section 4.4.5):
# a weak view (horizontal flip) and a strong view (flip + always-on random-colour cutout +
# RandAugment), produced by mmpretrain's MultiView after one shared 224 x 224 squish resize.
# Everything else (splits, labels, difficult handling, [0, 1] RGB inputs, metrics, evaluation
# pipeline) is inherited from voc2007_l2d.py. MultiViewClsDataPreprocessor normalises each view
# separately and hands the model a list [weak, strong] of [B, 3, 224, 224] tensors; the model's
# `views` option says which net sees which view. Evaluation batches stay single-view.
_base_ = ['./voc2007_l2d.py']

image_size = 224
flip = dict(type='RandomFlip', prob=0.5, direction='horizontal')
cutout = dict(type='RandomColorCutout', cutout_factor=0.5, prob=1.0)
# mmpretrain's RandAugment stands in for the UDA RandAugment of L2D (see voc2007_l2d.py).
rand_augment = dict(
    type='RandAugment',
    policies='timm_increasing',
    num_policies=2,
    total_level=10,
    magnitude_level=9,
    magnitude_std=0.5,
    hparams=dict(pad_val=128),
)

train_pipeline = [
    dict(type='LoadImageFromFile', imdecode_backend='pillow'),
    dict(type='Resize', scale=(image_size, image_size), keep_ratio=False, backend='pillow',
         interpolation='bilinear'),
    dict(type='MultiView', num_views=[1, 1],
         transforms=[[flip], [flip, cutout, rand_augment]]),
    dict(type='PackInputs'),
]

# The base dataloader captured the base pipeline when it was parsed; point it at this one.
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
data_preprocessor = dict(type='MultiViewClsDataPreprocessor')
