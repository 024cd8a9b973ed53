"""Logit distillation: single-label (KD, DKD, MLLD) and multi-label (MLD, PS / PD, NDD, L2D's
label-embedding terms, MSE, MDKD) losses between student and teacher outputs."""

from .dkd import DKDLoss, decoupled_kd  # noqa: F401
from .kd import MultiLabelKDLoss, SoftmaxKDLoss, multi_label_kd, softmax_kd  # noqa: F401
from .label_embedding import (
    ClassAwareDistillLoss,
    InstanceAwareDistillLoss,  # noqa: F401
    LabelEmbeddingDistillLoss,
    class_aware_distance_loss,
    grouped_huber_distance_loss,
    instance_aware_distance_loss,
    pairwise_huber_distance_loss,
)
from .mdkd import MultiOrderDependencyLoss, dependency_matrix  # noqa: F401
from .mld import MultiLabelLogitDistillLoss, multi_label_logit_distill  # noqa: F401
from .mlld import MLLDLoss, multi_level_logit_distill  # noqa: F401
from .mse import MSEDistillLoss, mse_distill  # noqa: F401
from .negative_discrepancy import NegativeDiscrepancyLoss, negative_discrepancy  # noqa: F401
from .partial_softmax import (
    PartialSoftmaxLoss,
    PositiveDivideLoss,  # noqa: F401
    partial_softmax_kl,
)

__all__ = [
    'ClassAwareDistillLoss',
    'DKDLoss',
    'InstanceAwareDistillLoss',
    'LabelEmbeddingDistillLoss',
    'MLLDLoss',
    'MSEDistillLoss',
    'MultiLabelKDLoss',
    'MultiLabelLogitDistillLoss',
    'MultiOrderDependencyLoss',
    'NegativeDiscrepancyLoss',
    'PartialSoftmaxLoss',
    'PositiveDivideLoss',
    'SoftmaxKDLoss',
    'class_aware_distance_loss',
    'decoupled_kd',
    'dependency_matrix',
    'grouped_huber_distance_loss',
    'instance_aware_distance_loss',
    'mse_distill',
    'multi_label_kd',
    'multi_label_logit_distill',
    'multi_level_logit_distill',
    'negative_discrepancy',
    'pairwise_huber_distance_loss',
    'partial_softmax_kl',
    'softmax_kd',
]
