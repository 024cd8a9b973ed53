# NUS-WIDE (81 concepts) as in Kobayashi (CVPR 2023) Table C: the official train / test lists
# without the images that have no label (protocol='official_labeled'; 125,448 / 83,898 in the
# paper), the Two-way pipeline at 224. Images listed but not on disk are skipped and counted in the
# log.
_base_ = ['./two_way_pipeline.py']
num_classes = 81
data_root = 'data/nuswide'
data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(
    dataset=dict(
        type='NUSWIDE',
        data_root=data_root,
        split='train',
        protocol='official_labeled',
        missing_images='skip',
        pipeline={{_base_.train_pipeline}},
    )
)
val_dataloader = dict(
    dataset=dict(
        train_dataloader['dataset'], split='test', pipeline={{_base_.test_pipeline}}, test_mode=True
    )
)
test_dataloader = val_dataloader
