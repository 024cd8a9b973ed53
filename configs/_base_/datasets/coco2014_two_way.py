# MS-COCO 2014 as in Kobayashi (CVPR 2023) Table B: train2014 / val2014 images with at least one
# label (keep_unlabeled=False), classes in category-id order, the Two-way pipeline at 224.
_base_ = ['./two_way_pipeline.py']
num_classes = 80
data_preprocessor = dict(num_classes=num_classes)
# The fields both splits share (a name with two leading underscores stays out of the config).
__dataset = dict(
    type='COCOMultiLabel', data_root='data/coco', split='train', class_order='category_id'
)
train_dataloader = dict(dataset=dict(__dataset, _delete_=True, **_base_.train_dataloader.dataset))
val_dataloader = dict(
    dataset=dict(__dataset, _delete_=True, split='val', **_base_.val_dataloader.dataset)
)
test_dataloader = val_dataloader
