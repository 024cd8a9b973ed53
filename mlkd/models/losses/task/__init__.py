"""Task losses: a network's predictions against the labels (:class:`~..base.TaskLoss`)."""
from .asymmetric import AsymmetricMultiLabelLoss, asymmetric_loss, focal_weight  # noqa: F401
from .bce import BinaryCrossEntropySumLoss, binary_cross_entropy_sum  # noqa: F401
from .focal import AsymmetricFocalLoss, SigmoidFocalLoss, sigmoid_focal_loss  # noqa: F401
from .missing_label import (FocalMarginLoss, HillLoss, SPLCLoss, focal_margin_loss,  # noqa: F401
                            hill_loss, splc_loss)
from .two_way import TwoWayMultiLabelLoss, two_way_loss, two_way_set_losses  # noqa: F401
from .unobserved import UnobservedAsNegative  # noqa: F401

__all__ = [
    'AsymmetricFocalLoss',
    'AsymmetricMultiLabelLoss',
    'BinaryCrossEntropySumLoss',
    'FocalMarginLoss',
    'HillLoss',
    'SPLCLoss',
    'SigmoidFocalLoss',
    'TwoWayMultiLabelLoss',
    'UnobservedAsNegative',
    'asymmetric_loss',
    'binary_cross_entropy_sum',
    'focal_margin_loss',
    'focal_weight',
    'hill_loss',
    'sigmoid_focal_loss',
    'splc_loss',
    'two_way_loss',
    'two_way_set_losses',
]


def __getattr__(name: str):
    from .. import _deprecated
    return _deprecated.renamed(name)
