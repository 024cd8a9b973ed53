_base_ = [
    '../../_base_/pairs/intra_class/tiny_imagenet_vgg13_to_vgg8.py',
    '../../_base_/methods/crd.py',
]
model = _base_.method
model.distill_losses.crd.num_samples = _base_.num_train_samples
