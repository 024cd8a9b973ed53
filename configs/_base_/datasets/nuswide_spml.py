# NUS-WIDE (81 concepts) for single-positive training (Verelst et al., WACV 2023): Cole et al.'s
# re-crawled subset (protocol='cole'; 'official' keeps unlabeled images, 'official_labeled' is
# ASL's / Kobayashi's variant). Images listed but not on disk are skipped and counted in the log
# (missing_images='skip').
_base_ = ['./spml_pipeline.py']
num_classes = 81
data_root = 'data/nuswide'
protocol = 'cole'
data_preprocessor = dict(num_classes=num_classes)
# The fields both splits share (a name with two leading underscores stays out of the config).
__dataset = dict(
    type='NUSWIDE', data_root=data_root, split='train', protocol=protocol, missing_images='skip'
)
train_dataloader = dict(dataset=dict(__dataset, _delete_=True, **_base_.train_dataloader.dataset))
val_dataloader = dict(
    dataset=dict(__dataset, _delete_=True, split='test', **_base_.val_dataloader.dataset)
)
test_dataloader = val_dataloader
