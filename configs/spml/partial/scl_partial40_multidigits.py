# EN + SCL with partial labels: 40 % of each training image's positives observed (max(1, round(0.40
# k)) of its k positives, mlkd/datasets/observed_labels.py; Verelst et al. (WACV 2023) Table B.1),
# no observed negatives. The draw is fixed (seed 0) whatever the training seed.
_base_ = ['../scl_multidigits.py']
train_dataloader = dict(
    dataset=dict(
        variant='multi_label', observed_labels=dict(mode='fraction', fraction=0.40, seed=0)
    )
)
