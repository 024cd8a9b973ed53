# The L2D protocol's teacher recipe on NUS-WIDE: the one-cycle schedule sized for 80 epochs,
# stopped after 30 (schedules/onecycle_80e_stop30.py); what a teacher config adds its model to.
_base_ = [
    '../datasets/nuswide_l2d.py',
    '../schedules/onecycle_80e_stop30.py',
    '../default_runtime.py',
]
