_base_ = [
    '../_base_/pairs/cifar100_resnet32x4_to_resnet8x4.py',
    '../_base_/methods/reviewkd_mdistiller_3stages.py',
]
model = _base_.method
model.distill_losses.reviewkd.loss_weight = 5.0  # mdistiller: ResNet8x4 students
