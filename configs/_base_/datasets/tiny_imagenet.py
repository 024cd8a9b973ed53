# Tiny ImageNet (200 classes, 64x64) read from the release layout (`wnids.txt`, `words.txt`,
# `train/<wnid>/images/*.JPEG`, `val/images` + `val/val_annotations.txt`), single-label, with
# mdistiller's pipeline (mdistiller/dataset/tiny_imagenet.py @ a08d46f): torchvision's
# RandomRotation(20) + RandomHorizontalFlip(0.5) for training, no augmentation for testing,
# normalised with its channel mean / std. The torchvision transforms run on PIL images through
# mmpretrain's wrappers, so the augmentation is torchvision's own; they treat channels alike, so
# the images stay in OpenCV's BGR order until the data preprocessor converts them.
# Loaders, sampler and top-1 / top-5 accuracy as cifar100.py.
_base_ = ['./cifar100.py']
dataset_type = 'TinyImageNet'
data_root = 'data/tiny-imagenet-200'
num_classes = 200
num_train_samples = 100000  # rows of CRD's memory banks

data_preprocessor = dict(
    num_classes=num_classes,
    mean=[0.4802 * 255, 0.4481 * 255, 0.3975 * 255],
    std=[0.2302 * 255, 0.2265 * 255, 0.2262 * 255],
    to_rgb=True,
)

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='NumpyToPIL'),
    dict(type='torchvision/RandomRotation', degrees=20),
    dict(type='torchvision/RandomHorizontalFlip', p=0.5),
    dict(type='PILToNumpy'),
    dict(type='PackInputs'),
]
test_pipeline = [dict(type='LoadImageFromFile'), dict(type='PackInputs')]

# mdistiller's Tiny ImageNet configs (configs/tiny_imagenet/dot/*.yaml): batch 256; tests 64.
train_dataloader = dict(
    batch_size=256,
    num_workers=8,
    dataset=dict(type=dataset_type, data_root=data_root, pipeline=train_pipeline),
)
val_dataloader = dict(
    num_workers=8,
    dataset=dict(type=dataset_type, data_root=data_root, split='val', pipeline=test_pipeline),
)
test_dataloader = val_dataloader
