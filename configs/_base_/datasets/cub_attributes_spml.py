# CUB-200-2011, 312 attributes, for single-positive training (Verelst et al., WACV 2023): official
# train / test split; an attribute is positive when is_present = 1, whatever its certainty
# (min_certainty=1, Cole et al.'s rule; see mlkd/datasets/cub.py).
_base_ = ['./spml_pipeline.py']
num_classes = 312
data_root = 'data/cub/CUB_200_2011'
data_preprocessor = dict(num_classes=num_classes)
# The fields both splits share (a name with two leading underscores stays out of the config).
__dataset = dict(type='CUBAttributes', data_root=data_root, split='train', min_certainty=1)
train_dataloader = dict(dataset=dict(__dataset, _delete_=True, **_base_.train_dataloader.dataset))
val_dataloader = dict(
    dataset=dict(__dataset, _delete_=True, split='test', **_base_.val_dataloader.dataset)
)
test_dataloader = val_dataloader
