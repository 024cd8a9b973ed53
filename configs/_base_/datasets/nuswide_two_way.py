# NUS-WIDE (81 concepts) as in Kobayashi (CVPR 2023) Table C: the official train / test lists
# without the images that have no label (protocol='official_labeled'; 125,448 / 83,898 in the
# paper), the Two-way pipeline at 224. Images listed but not on disk are skipped and counted in the
# log.
_base_ = ['./two_way_pipeline.py']
num_classes = 81
data_root = 'data/nuswide'
data_preprocessor = dict(num_classes=num_classes)
# The fields both splits share (a name with two leading underscores stays out of the config).
__dataset = dict(
    type='NUSWIDE',
    data_root=data_root,
    split='train',
    protocol='official_labeled',
    missing_images='skip',
)
train_dataloader = dict(dataset=dict(__dataset, _delete_=True, **_base_.train_dataloader.dataset))
val_dataloader = dict(
    dataset=dict(__dataset, _delete_=True, split='test', **_base_.val_dataloader.dataset)
)
test_dataloader = val_dataloader
