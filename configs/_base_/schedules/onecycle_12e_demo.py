# The onecycle_80e recipe shortened for CPU demos on MultiDigits: small nets trained from scratch
# want a larger peak learning rate and a short cycle. Same optimizer, warm-up fraction and beta1
# cycling as onecycle_80e.
_base_ = ['./onecycle_80e.py']
max_lr = 2e-3
schedule_epochs = 12
optim_wrapper = dict(optimizer=dict(lr=max_lr))
param_scheduler = [
    dict(type='OneCycleLR', eta_max=max_lr, total_steps=schedule_epochs, end=schedule_epochs, pct_start=0.2,
         by_epoch=True, convert_to_iter_based=True),
    dict(type='OneCycleMomentum', base_momentum=0.85, max_momentum=0.95,
         total_steps=schedule_epochs, end=schedule_epochs, pct_start=0.2, by_epoch=True,
         convert_to_iter_based=True),
]
train_cfg = dict(max_epochs=schedule_epochs, val_interval=schedule_epochs)
