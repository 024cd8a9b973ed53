# onecycle_12e_demo.py shortened to 10 epochs (same peak lr, warm-up fraction and beta1 cycling):
# the bundled-data study of configs/intra_class, whose 21 runs must fit in minutes of one CPU core.
_base_ = ['./onecycle_12e_demo.py']
schedule_epochs = 10
param_scheduler = [
    dict(_base_.param_scheduler[0], total_steps=schedule_epochs, end=schedule_epochs),
    dict(_base_.param_scheduler[1], total_steps=schedule_epochs, end=schedule_epochs),
]
train_cfg = dict(max_epochs=schedule_epochs, val_interval=schedule_epochs)
