# MS-COCO 2014 for single-positive training (Verelst et al., WACV 2023): train2014 with one
# observed positive per image (uniform, seed 1200 as Cole et al.'s generator), val2014 with full
# labels. Classes in category-id order, the order of Cole et al.'s formatted files. For their
# published observed labels use observed_labels=dict(mode='file',
# file='formatted_train_labels_obs.npy', images_file='formatted_train_images.npy'); for Verelst et
# al. (WACV 2023) Table B.1's partial settings see coco2014_spml_partial75.py /
# coco2014_spml_partial40.py.
_base_ = ['./spml_pipeline.py']
num_classes = 80
# The observation spml_pipeline.py draws, also at the top of the resolved config (cfg.observed_labels).
observed_labels = _base_.train_dataloader.dataset.observed_labels
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
