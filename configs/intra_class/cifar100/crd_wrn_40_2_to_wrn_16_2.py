_base_ = [
    '../../_base_/pairs/intra_class/cifar100_wrn_40_2_to_wrn_16_2.py',
    '../../_base_/methods/crd.py',
]
model = _base_.method
model.distill_losses.crd.num_samples = _base_.num_train_samples
