# MultiDigits, single-positive variant: every training image keeps one randomly chosen positive
# (fixed seed); validation keeps the full label sets.
_base_ = ['./multidigits.py']
variant = 'single_positive'
train_dataloader = dict(dataset=dict(variant=variant))
val_dataloader = dict(dataset=dict(variant=variant))
test_dataloader = val_dataloader
