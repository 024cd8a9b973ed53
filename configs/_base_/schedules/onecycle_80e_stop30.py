# Teacher recipe of L2D / 3D: the one-cycle schedule is sized for 80 epochs but training stops after
# 30, near the peak learning rate (the teacher never anneals).
_base_ = ['./onecycle_80e.py']
train_cfg = dict(max_epochs=30)
