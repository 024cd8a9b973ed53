# Tutorial config: the demo student (full labels) with the user's stateful ProgressiveTargetLoss
# beside its task loss, through ClassifierWithLosses (which supplies logits, gt, sample_idx).
#   PYTHONPATH=docs/tutorials/new_method python tools/train.py \
#       docs/tutorials/new_method/progressive_targets_multidigits.py
_base_ = ['../../../configs/spml/full_labels_multidigits.py']
custom_imports = dict(imports=['progressive_targets_loss'], allow_failed_imports=False)
model = dict(
    losses=dict(
        ps_kd=dict(type='ProgressiveTargetLoss', num_samples=_base_.num_train_samples, alpha=0.5)
    )
)
