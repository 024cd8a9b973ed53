# Pascal VOC 2012 for single-positive training (Verelst et al., WACV 2023, with Cole et al.'s
# splits): the `train` image set with one observed positive per image, the `val` image set (5,823
# images) as the test set. A class present only through difficult objects is a negative in both
# (difficult_policy='negative'), as Cole et al.'s formatter reads the per-class lists' "1" only.
_base_ = ['./spml_pipeline.py']
num_classes = 20
data_root = 'data/VOCdevkit/VOC2012'
data_preprocessor = dict(num_classes=num_classes)
# The fields both splits share (a name with two leading underscores stays out of the config).
__dataset = dict(
    type='VOCMultiLabel', data_root=data_root, split='train', difficult_policy='negative'
)
train_dataloader = dict(dataset=dict(__dataset, _delete_=True, **_base_.train_dataloader.dataset))
val_dataloader = dict(
    dataset=dict(__dataset, _delete_=True, split='val', **_base_.val_dataloader.dataset)
)
test_dataloader = val_dataloader
