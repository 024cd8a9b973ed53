# CIFAR-100 (python release, `<data_root>/cifar-100-python/{train,test,meta}`), single-label,
# with mdistiller's pipeline (mdistiller/dataset/cifar100.py @ a08d46f): random crop 32 with
# 4 px zero padding + horizontal flip for training, no augmentation for testing, normalised with
# the CIFAR-100 training-set channel mean / std. The test split is the validation set, as there.
dataset_type = 'CIFAR100'
data_root = 'data/cifar'
num_classes = 100
num_train_samples = 50000  # rows of CRD's memory banks

data_preprocessor = dict(
    type='ClsDataPreprocessor',
    num_classes=num_classes,
    mean=[0.5071 * 255, 0.4867 * 255, 0.4408 * 255],
    std=[0.2675 * 255, 0.2565 * 255, 0.2761 * 255],
    to_rgb=False,  # the CIFAR datasets give RGB arrays already
)

train_pipeline = [
    dict(type='RandomCrop', crop_size=32, padding=4, padding_mode='constant', pad_val=0),
    dict(type='RandomFlip', prob=0.5, direction='horizontal'),
    dict(type='PackInputs'),
]
test_pipeline = [dict(type='PackInputs')]

# mdistiller: batch 64 for training and testing, 2 workers; the test split, in order, without
# augmentation, for validation.
train_dataloader = dict(
    batch_size=64,
    num_workers=2,
    persistent_workers=True,
    sampler=dict(type='EpochKeyedSampler', shuffle=True),
    dataset=dict(type=dataset_type, data_root=data_root, split='train', pipeline=train_pipeline),
)
val_dataloader = dict(
    train_dataloader,
    sampler=dict(type='EpochKeyedSampler', shuffle=False),
    dataset=dict(train_dataloader['dataset'], split='test', pipeline=test_pipeline),
)
test_dataloader = val_dataloader

val_evaluator = dict(type='Accuracy', topk=(1, 5))
test_evaluator = val_evaluator
