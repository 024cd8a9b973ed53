# Verelst et al. (WACV 2023) Table B.1, "75 % labels": 75 % of each training image's positives
# observed (at least one).
_base_ = ['./coco2014_spml.py']
train_dataloader = dict(
    dataset=dict(observed_labels=dict(_delete_=True, mode='fraction', fraction=0.75, seed=1200))
)
