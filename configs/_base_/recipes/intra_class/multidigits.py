# The bundled-data study of configs/intra_class (README, "Study on MultiDigits"): single-label
# MultiDigits with 1000 training mosaics (datasets/multidigits_single_label_heldout.py), the demo's
# one-cycle Adam recipe for CPUs shortened to 10 epochs (schedules/onecycle_10e_demo.py) at batch
# 32 (320 iterations), mlkd's runtime and the single-label head.
_base_ = [
    '../../datasets/multidigits_single_label_heldout.py',
    '../../schedules/onecycle_10e_demo.py',
    '../../default_runtime.py',
    '../../models/common/single_label_head.py',
]
single_label_head = dict(num_classes=_base_.num_classes)
default_hooks = dict(logger=dict(interval=10))
