# NUS-WIDE (81 concepts) multi-label, L2D protocol, as the 3D paper trains on it (C. Li, G. Cheng,
# "Positive Divide and Negative Discrepancy: A New Perspective on Multi-Label Logit Distillation",
# supplement §A: "161K and 107K annotated images for training and validation").
#
# * Splits: the official TrainImagelist / TestImagelist (161,789 / 107,859 images), the
#   81 concepts in Concepts81.txt order (protocol='official'). Images without any concept are
#   kept as all-negative samples, as L2D's NUS-WIDE loader does. Many Flickr images of the lists
#   can no longer be downloaded: those missing on disk are skipped and counted in the log
#   (`missing_images='error'` refuses them instead).
# * Pipeline, normalisation, loaders and metrics: those of coco2014_l2d.py, which this file
#   inherits (224 squish resize with PIL, random horizontal flip (the 3D paper's weak
#   augmentation), always-on random-colour cutout + L2D's UDA RandAugment, RGB in [0, 1],
#   oracle-top-k and thresholded F1).
_base_ = ['./coco2014_l2d.py']
dataset_type = 'NUSWIDE'
data_root = 'data/nuswide'
num_classes = 81
data_preprocessor = dict(num_classes=num_classes)

train_dataloader = dict(
    dataset=dict(
        _delete_=True,
        type=dataset_type,
        data_root=data_root,
        split='train',
        protocol='official',
        missing_images='skip',
        pipeline=_base_.train_pipeline,
    )
)
val_dataloader = dict(
    dataset=dict(
        train_dataloader['dataset'], split='test', pipeline=_base_.test_pipeline, test_mode=True
    )
)
test_dataloader = val_dataloader
