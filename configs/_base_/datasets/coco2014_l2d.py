# MS-COCO 2014 multi-label, L2D protocol (methods.md sections 4.1.3 and 7).
#
# * Splits: train2014 / val2014 images with at least one instance annotation (82,081 / 40,137);
#   val2014 doubles as the test set, as in L2D. Labels index the alphabetically sorted 80 category
#   names (0 airplane ... 49 person ... 79 zebra): `class_order='alphabetical'`. Use
#   'category_id' only for checkpoints trained in pycocotools order.
# * Images are squished to 224 x 224 with PIL's antialiased bilinear resize (aspect not kept), as
#   L2D's torchvision Resize on PIL images; decoding also goes through PIL.
# * Train: a random horizontal flip (p = 0.5: the 3D paper's weak augmentation, supplement §A,
#   which every model of its comparison trains with; L2D's own code has no flip, so for L2D's
#   protocol drop `flip` from `train_pipeline`), ASL/L2D's always-on half-size random-colour
#   cutout, then L2D's UDA-style RandAugment (`UDARandAugment`: a pair of ops from 15 x levels
#   1-9, each with p = 0.5; pixel-identical to `randaugment==1.0.2` per op).
# * No mean/std normalisation: inputs are RGB in [0, 1] (mean 0, std 255; images are loaded BGR
#   by mmcv, hence to_rgb=True).
# * Metrics follow L2D's evaluate(): CF1/OF1 at the oracle top-k and at threshold 0.5, CF1 as the
#   mean of per-class F1 (methods.md section 6.2).
dataset_type = 'COCOMultiLabel'
data_root = 'data/coco'
num_classes = 80
image_size = 224

data_preprocessor = dict(  # builds the 1 / 0 / -1 target once per batch
    type='MultiLabelDataPreprocessor',
    num_classes=num_classes,
    mean=[0.0, 0.0, 0.0],
    std=[255.0, 255.0, 255.0],
    to_rgb=True,
    to_onehot=True,
)

rand_augment = dict(type='UDARandAugment')
cutout = dict(type='RandomColorCutout', cutout_factor=0.5, prob=1.0)
flip = dict(type='RandomFlip', prob=0.5, direction='horizontal')

train_pipeline = [
    dict(type='LoadImageFromFile', imdecode_backend='pillow'),
    dict(
        type='Resize',
        scale=(image_size, image_size),
        keep_ratio=False,
        backend='pillow',
        interpolation='bilinear',
    ),
    flip,
    cutout,
    rand_augment,
    dict(type='PackInputs'),
]
test_pipeline = [*train_pipeline[:2], dict(type='PackInputs')]  # the same squish, no augmentation

# The loader settings both splits share (a name with two leading underscores stays out of the
# config).
__loader = dict(batch_size=64, num_workers=8, persistent_workers=True)
train_dataloader = dict(
    __loader,
    # L2D drops the last incomplete batch: 82,081 // 64 = 1282 steps per epoch.
    drop_last=True,
    sampler=dict(type='EpochKeyedSampler', shuffle=True),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        split='train',
        class_order='alphabetical',
        keep_unlabeled=False,
        pipeline=train_pipeline,
    ),
)
val_dataloader = dict(
    __loader,
    sampler=dict(type='EpochKeyedSampler', shuffle=False),
    dataset=dict(train_dataloader['dataset'], split='val', pipeline=test_pipeline, test_mode=True),
)
test_dataloader = val_dataloader

val_evaluator = dict(
    type='MultiLabelMetrics', conventions=('oracle_topk', 'threshold'), cf1_mode='mean_of_class_f1'
)
test_evaluator = val_evaluator
