# MS-COCO 2014 as in Kobayashi (CVPR 2023) Table B: train2014 / val2014 images with at least one
# label (keep_unlabeled=False), classes in category-id order, the Two-way pipeline at 224.
_base_ = ['./two_way_pipeline.py']
num_classes = 80
data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(
    dataset=dict(
        type='COCOMultiLabel',
        data_root='data/coco',
        split='train',
        class_order='category_id',
        pipeline={{_base_.train_pipeline}},
    )
)
val_dataloader = dict(
    dataset=dict(
        train_dataloader['dataset'], split='val', pipeline={{_base_.test_pipeline}}, test_mode=True
    )
)
test_dataloader = val_dataloader
