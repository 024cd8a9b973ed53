"""Single-positive and partial-label training: AN, AN-LS, WAN, EPR, ROLE, EM, EN, CL, SCL."""

from .assume_negative import (
    AssumeNegativeLoss,
    WeakAssumeNegativeLoss,  # noqa: F401
    assume_negative,
)
from .common import LOG_EPSILON, neg_log, observation_masks  # noqa: F401
from .consistency import (
    ConsistencyLoss,
    consistency_distance,  # noqa: F401
    consistency_loss,
)
from .entropy_maximisation import (
    EntropyMaximisationLoss,
    binary_entropy,  # noqa: F401
    entropy_maximisation,
)
from .expected_negative import ExpectedNegativeLoss, expected_negative_loss  # noqa: F401
from .expected_positives import ExpectedPositivesLoss, expected_positives_loss  # noqa: F401
from .role import ROLELoss, role_loss  # noqa: F401
from .spatial_consistency import (
    SpatialConsistencyLoss,
    crop_grid,  # noqa: F401
    heatmap_cell_grid,
    read_heatmaps,
    write_heatmaps,
)

__all__ = [
    'AssumeNegativeLoss',
    'ConsistencyLoss',
    'EntropyMaximisationLoss',
    'ExpectedNegativeLoss',
    'ExpectedPositivesLoss',
    'LOG_EPSILON',
    'ROLELoss',
    'SpatialConsistencyLoss',
    'WeakAssumeNegativeLoss',
    'assume_negative',
    'binary_entropy',
    'consistency_distance',
    'consistency_loss',
    'crop_grid',
    'entropy_maximisation',
    'expected_negative_loss',
    'expected_positives_loss',
    'heatmap_cell_grid',
    'neg_log',
    'observation_masks',
    'read_heatmaps',
    'role_loss',
    'write_heatmaps',
]
