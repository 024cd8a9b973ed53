# The positive control's upper line: the same student, recipe and augmentation trained with BCE on
# every label (assume negative with nothing unobserved).
_base_ = ['./an.py']
train_dataloader = dict(dataset=dict(observed_labels=None))
# No draw to seed: the seeds set the data order and augmentation only.
seed_key = 'train_dataloader.sampler.seed'
