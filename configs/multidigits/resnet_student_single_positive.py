# MultiDigits multi-label classifier trained from single-positive labels: one observed positive per
# training image, the other classes unobserved (-1 in the target, skipped by the head's
# BinaryCrossEntropySumLoss, i.e. positives-only supervision); validation on the full labels.
# Losses for the unobserved labels (assume negative, EN, ...) are set on the model, not here.
_base_ = [
    '../_base_/models/digits_resnet_student.py',
    '../_base_/recipes/multidigits_single_positive.py',
]
