# The 100-class bundled study of configs/intra_class (README, "Study on DigitObjects"): DigitObjects
# (datasets/digit_objects.py: one coloured digit per image, 100 classes, 20,000 training images),
# the demo's one-cycle Adam recipe for CPUs over 24 epochs (schedules/onecycle_24e_demo.py) at batch
# 64 (7,512 iterations), mlkd's runtime and the single-label head. A candidate regime: the study's
# search on val decides it (student spread, the KD positive control) before any test read.
_base_ = [
    '../../datasets/digit_objects.py',
    '../../schedules/onecycle_24e_demo.py',
    '../../default_runtime.py',
    '../../models/common/single_label_head.py',
]
single_label_head = dict(num_classes=_base_.num_classes)
default_hooks = dict(logger=dict(interval=10))
