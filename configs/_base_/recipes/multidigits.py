# The MultiDigits demo recipe (datasets/multidigits.py, the 12-epoch one-cycle schedule for CPUs, a
# log line every 10 iterations): what a demo classifier or distillation config adds its model to.
_base_ = [
    '../datasets/multidigits.py',
    '../schedules/onecycle_12e_demo.py',
    '../default_runtime.py',
]
default_hooks = dict(logger=dict(interval=10))
