# Full-label reference for the single-positive methods: AN on the clean label sets is plain BCE
# (mean over B x C), with the same network, augmentation, schedule and splits.
_base_ = ['./an_multidigits.py']
train_dataloader = dict(dataset=dict(variant='multi_label'))
