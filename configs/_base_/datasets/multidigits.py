# MultiDigits: bundled multi-label demo data built from scikit-learn's digit scans (no download).
# Images are mosaics of 1-4 digits; labels are the set of digit classes present (10 classes).
dataset_type = 'MultiDigits'
num_classes = 10
variant = 'multi_label'
image_size = 32
num_train_samples = 2000  # training-set size (rows of CRD's memory banks)

data_preprocessor = dict(  # builds the 1 / 0 / -1 target once per batch
    type='MultiLabelDataPreprocessor',
    num_classes=num_classes,
    mean=[0.0, 0.0, 0.0],
    std=[255.0, 255.0, 255.0],
    to_rgb=False,
    to_onehot=True,
)

train_pipeline = [
    dict(type='RandomCrop', crop_size=image_size, padding=2, padding_mode='constant'),
    dict(type='PackInputs'),
]
test_pipeline = [dict(type='PackInputs')]

train_dataloader = dict(
    batch_size=64,
    num_workers=2,
    persistent_workers=True,
    sampler=dict(type='EpochKeyedSampler', shuffle=True),
    dataset=dict(
        type=dataset_type,
        split='train',
        variant=variant,
        num_samples=num_train_samples,
        image_size=image_size,
        seed=0,
        pipeline=train_pipeline,
    ),
)
# Validation: 500 mosaics of the val split, in order, without augmentation.
val_dataloader = dict(
    train_dataloader,
    batch_size=128,
    sampler=dict(type='EpochKeyedSampler', shuffle=False),
    dataset=dict(train_dataloader['dataset'], split='val', num_samples=500, pipeline=test_pipeline),
)
test_dataloader = val_dataloader

val_evaluator = dict(type='MultiLabelMetrics', thr=0.5, conventions=('threshold', 'oracle_topk'))
test_evaluator = val_evaluator
