# The L2D protocol's student recipe on NUS-WIDE (datasets/nuswide_l2d.py, 80 epochs of the
# one-cycle Adam schedule) with mlkd's runtime: what a student or a distillation config adds its
# model to.
_base_ = ['../datasets/nuswide_l2d.py', '../schedules/onecycle_80e.py', '../default_runtime.py']
