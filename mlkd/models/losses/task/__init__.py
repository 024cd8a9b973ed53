"""Task losses: a network's predictions against the labels (:class:`~..base.TaskLoss`)."""

from .asymmetric import AsymmetricMultiLabelLoss, asymmetric_loss, focal_weight  # noqa: F401
from .bce import BinaryCrossEntropySumLoss, binary_cross_entropy_sum  # noqa: F401
from .focal import AsymmetricFocalLoss, SigmoidFocalLoss, sigmoid_focal_loss  # noqa: F401
from .missing_label import (
    FocalMarginLoss,
    HillLoss,
    SPLCLoss,
    focal_margin_loss,  # noqa: F401
    hill_loss,
    splc_loss,
)
from .ranking import (
    RobustMultiLabelLoss,
    WARPLoss,
    robust_ramp_loss,  # noqa: F401
    warp_loss,
)
from .softmax import MultiLabelSoftmaxLoss, multilabel_softmax_loss  # noqa: F401
from .two_way import TwoWayMultiLabelLoss, two_way_loss, two_way_set_losses  # noqa: F401
from .unobserved import UnobservedAsNegative  # noqa: F401

__all__ = [
    'AsymmetricFocalLoss',
    'AsymmetricMultiLabelLoss',
    'BinaryCrossEntropySumLoss',
    'FocalMarginLoss',
    'HillLoss',
    'MultiLabelSoftmaxLoss',
    'RobustMultiLabelLoss',
    'SPLCLoss',
    'SigmoidFocalLoss',
    'TwoWayMultiLabelLoss',
    'UnobservedAsNegative',
    'WARPLoss',
    'asymmetric_loss',
    'binary_cross_entropy_sum',
    'focal_margin_loss',
    'focal_weight',
    'hill_loss',
    'multilabel_softmax_loss',
    'robust_ramp_loss',
    'sigmoid_focal_loss',
    'splc_loss',
    'two_way_loss',
    'two_way_set_losses',
    'warp_loss',
]
