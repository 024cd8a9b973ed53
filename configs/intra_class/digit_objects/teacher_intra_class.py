# DigitObjects study intra-class contrastive teacher: teacher.py's network trained with
# CE + 0.02·L_intra (methods/intra_class_teacher.py) on two views per image, the same recipe, with
# one change made on val (README, "Study on DigitObjects", amendment 2): the logits are L2-normalised
# before the tuplet loss (the unit-norm embedding of the paper's theory, §4; T = 1, eq. 4 has none).
# On raw logits the loss grew to 85-750 once anchors passed the margin and derailed the teacher.
_base_ = [
    '../../_base_/datasets/digit_objects_anchor_positive.py',
    '../../_base_/schedules/onecycle_24e_demo.py',
    '../../_base_/default_runtime.py',
    '../../_base_/methods/intra_class_teacher.py',
]
model = dict(
    _base_.method,
    classifier='{{fileDirname}}/teacher.py',
    probe_input_size=(32, 32),
    losses=dict(intra=dict(_base_.method.losses.intra, normalize=True)),
)
default_hooks = dict(logger=dict(interval=10))
