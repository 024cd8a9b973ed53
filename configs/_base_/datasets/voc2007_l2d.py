# Pascal VOC 2007 multi-label, L2D protocol: trainval (5,011 images) / test (4,952), 20 classes.
#
# Same pipeline, normalisation, loaders and metric convention as coco2014_l2d.py (224 squish
# resize with PIL, random flip (the 3D paper's), always-on random-colour cutout + L2D's UDA
# RandAugment, RGB in [0, 1],
# oracle-top-k and thresholded F1), which this file inherits.
#
# Difficult objects (methods.md section 7):
# * train: `difficult_policy='positive'`, as L2D, which counts difficult objects as positives;
# * test: `difficult_policy='ignore'`: classes present only as difficult objects are listed in
#   `gt_label_difficult`, which PackInputs passes on as metainfo and MultiLabelMetrics (default
#   `difficult_as_ignored=True`) scores as -1, i.e. neither positive nor negative (the VOC devkit
#   convention). For L2D's own test numbers (difficult counted as positive) set the test dataset's
#   `difficult_policy='positive'`.
_base_ = ['./coco2014_l2d.py']
dataset_type = 'VOCMultiLabel'
data_root = 'data/VOCdevkit/VOC2007'
num_classes = 20
data_preprocessor = dict(num_classes=num_classes)

test_pipeline = [
    *_base_.test_pipeline[:-1],
    # Without gt_label_difficult in the data samples the metric cannot ignore difficult labels.
    dict(type='PackInputs',
         meta_keys=('sample_idx', 'img_path', 'ori_shape', 'img_shape', 'scale_factor', 'flip',
                    'flip_direction', 'gt_label_difficult')),
]

train_dataloader = dict(dataset=dict(
    _delete_=True, type=dataset_type, data_root=data_root, split='trainval',
    difficult_policy='positive', pipeline=_base_.train_pipeline))
val_dataloader = dict(dataset=dict(
    _delete_=True, type=dataset_type, data_root=data_root, split='test',
    difficult_policy='ignore', pipeline=test_pipeline, test_mode=True))
test_dataloader = val_dataloader
