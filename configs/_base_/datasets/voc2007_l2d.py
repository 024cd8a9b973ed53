# Pascal VOC 2007 multi-label, L2D protocol: trainval (5,011 images) / test (4,952), 20 classes.
#
# Same pipeline, normalisation, loaders and metric convention as coco2014_l2d.py (224 squish
# resize with PIL, random flip (the 3D paper's), always-on random-colour cutout + L2D's UDA
# RandAugment, RGB in [0, 1],
# oracle-top-k and thresholded F1), which this file inherits.
#
# Difficult objects (methods.md section 7): L2D counts every annotated object as a positive,
# "difficult" ones included, in training and at test time, and the 3D paper evaluates in L2D's
# protocol. Both splits therefore use `difficult_policy='positive'`: every class with an object
# is in `gt_label`, `gt_label_difficult` is empty. The other policy (VOCMultiLabel's default,
# the VOC-devkit convention) is one key away: `difficult_policy='ignore'` on the test dataset
# lists difficult-only classes in `gt_label_difficult`, which PackInputs passes on as metainfo
# and the data preprocessor and MultiLabelMetrics score as -1 (neither positive nor negative).
_base_ = ['./coco2014_l2d.py']
# After `_base_`: mmengine reads a config that imports before it as a lazy-import config. The
# module is not a config value (mmengine leaves modules out).
from mlkd.datasets import voc  # noqa: E402

dataset_type = 'VOCMultiLabel'
data_root = 'data/VOCdevkit/VOC2007'
num_classes = 20
data_preprocessor = dict(num_classes=num_classes)

test_pipeline = [
    *_base_.test_pipeline[:-1],
    # gt_label_difficult travels with the samples (after mmpretrain's default meta keys), so that
    # difficult_policy='ignore' needs no other change (empty under the protocol's 'positive').
    dict(type='PackInputs', meta_keys=voc.DIFFICULT_META_KEYS),
]

train_dataloader = dict(
    dataset=dict(
        _delete_=True,
        type=dataset_type,
        data_root=data_root,
        split='trainval',
        difficult_policy='positive',
        pipeline=_base_.train_pipeline,
    )
)
val_dataloader = dict(
    dataset=dict(train_dataloader['dataset'], split='test', pipeline=test_pipeline, test_mode=True)
)
test_dataloader = val_dataloader
