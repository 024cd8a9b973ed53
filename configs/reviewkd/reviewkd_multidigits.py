_base_ = ['../_base_/pairs/multidigits.py', '../_base_/methods/reviewkd.py']
model = _base_.method
# The 20-epoch warm-up of the 240-epoch CIFAR recipe, scaled to the 12-epoch demo schedule.
model.distill_losses.reviewkd.warmup_epochs = 1
