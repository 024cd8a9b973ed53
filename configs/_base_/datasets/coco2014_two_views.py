# MS-COCO 2014 with the 3D paper's two views per training image (methods.md section 4.4.5):
# a weak view (horizontal flip) and a strong view (flip + always-on random-colour cutout +
# UDA RandAugment), produced by mmpretrain's MultiView after one shared 224 x 224 squish resize.
# Everything else (splits, labels, difficult handling, [0, 1] RGB inputs, metrics, evaluation
# pipeline) is inherited from coco2014_l2d.py. MultiViewClsDataPreprocessor normalises each view
# separately and hands the model a list [weak, strong] of [B, 3, 224, 224] tensors; the model's
# `views` option says which net sees which view. Evaluation batches stay single-view.
_base_ = ['./coco2014_l2d.py']
train_pipeline = [
    *_base_.train_pipeline[:2],  # load, squish resize
    dict(
        type='MultiView',
        num_views=[1, 1],
        transforms=[[_base_.flip], [_base_.flip, _base_.cutout, _base_.rand_augment]],
    ),
    _base_.train_pipeline[-1],  # PackInputs
]
# The base dataloader captured the base pipeline when it was parsed; point it at this one.
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
data_preprocessor = dict(type='MultiViewClsDataPreprocessor')
