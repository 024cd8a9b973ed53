"""Feature and relation distillation: FitNet, AT, OFD, ReviewKD, VID, CRD, RKD, PKT."""

from .attention import ATLoss, attention_map, attention_transfer  # noqa: F401
from .crd import CRDLoss, contrast_scores, momentum_update, nce_loss  # noqa: F401
from .fitnet import FitNetLoss, hint_mse  # noqa: F401
from .ofd import OFDLoss, ofd_margin, ofd_partial_l2, teacher_bn_margins  # noqa: F401
from .relation import PKTLoss, RKDLoss, pkt, rkd_angle, rkd_distance  # noqa: F401
from .review import ReviewKDLoss, hierarchical_context_loss  # noqa: F401
from .vid import VIDLoss, vid_nll  # noqa: F401

__all__ = [
    'ATLoss',
    'CRDLoss',
    'FitNetLoss',
    'OFDLoss',
    'PKTLoss',
    'RKDLoss',
    'ReviewKDLoss',
    'VIDLoss',
    'attention_map',
    'attention_transfer',
    'contrast_scores',
    'hierarchical_context_loss',
    'hint_mse',
    'momentum_update',
    'nce_loss',
    'ofd_margin',
    'ofd_partial_l2',
    'pkt',
    'rkd_angle',
    'rkd_distance',
    'teacher_bn_margins',
    'vid_nll',
]
