# The onecycle_80e recipe shortened for CPU demos on MultiDigits: small nets trained from scratch
# want a larger peak learning rate and a short cycle. Same optimizer, warm-up fraction and beta1
# cycling as onecycle_80e.
_base_ = ['./onecycle_80e.py']
max_lr = 2e-3
schedule_epochs = 12
optim_wrapper = dict(optimizer=dict(lr=max_lr))
# onecycle_80e's two schedulers resized to the short cycle (the base captured its own values).
param_scheduler = [
    dict(
        _base_.param_scheduler[0], eta_max=max_lr, total_steps=schedule_epochs, end=schedule_epochs
    ),
    dict(_base_.param_scheduler[1], total_steps=schedule_epochs, end=schedule_epochs),
]
train_cfg = dict(max_epochs=schedule_epochs, val_interval=schedule_epochs)
