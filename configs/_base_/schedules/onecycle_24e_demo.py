# onecycle_12e_demo.py over 24 epochs (same peak lr, warm-up fraction and beta1 cycling): the
# DigitObjects study of configs/intra_class, whose small students from scratch stay on a plateau
# for half of the 12-epoch cycle (the study's README, "Study on DigitObjects").
_base_ = ['./onecycle_12e_demo.py']
schedule_epochs = 24
param_scheduler = [
    dict(_base_.param_scheduler[0], total_steps=schedule_epochs, end=schedule_epochs),
    dict(_base_.param_scheduler[1], total_steps=schedule_epochs, end=schedule_epochs),
]
train_cfg = dict(max_epochs=schedule_epochs, val_interval=schedule_epochs)
