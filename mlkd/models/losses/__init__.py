from .base import BaseDistillLoss, as_fp32, full_precision  # noqa: F401
from .label_embedding import (ClassAwareDistillLoss, InstanceAwareDistillLoss,  # noqa: F401
                              LabelEmbeddingDistillLoss, class_aware_distance_loss,
                              grouped_huber_distance_loss, instance_aware_distance_loss,
                              pairwise_huber_distance_loss)
from .mdkd import MultiOrderDependencyLoss  # noqa: F401
from .bce import BinaryCrossEntropySumLoss, binary_cross_entropy_sum  # noqa: F401
from .kd import MultiLabelKDLoss, SoftmaxKDLoss, multi_label_kd, softmax_kd  # noqa: F401
from .mld import MultiLabelLogitDistillLoss, multi_label_logit_distill  # noqa: F401
from .mse import MSEDistillLoss, mse_distill  # noqa: F401
from .negative_discrepancy import NegativeDiscrepancyLoss, negative_discrepancy  # noqa: F401
from .partial_softmax import (PartialSoftmaxLoss, PositiveDivideLoss,  # noqa: F401
                              partial_softmax_kl)
from .crd import CRDLoss, contrast_scores, momentum_update, nce_loss  # noqa: F401
from .dkd import DKDLoss, decoupled_kd  # noqa: F401
from .feature import ATLoss, FitNetLoss, attention_transfer, hint_mse  # noqa: F401
from .mlld import MLLDLoss, multi_level_logit_distill  # noqa: F401
from .ofd import OFDLoss, ofd_margin, ofd_partial_l2  # noqa: F401
from .relation import PKTLoss, RKDLoss, pkt, rkd_angle, rkd_distance  # noqa: F401
from .review import ReviewKDLoss, hierarchical_context_loss  # noqa: F401
from .vid import VIDLoss, vid_nll  # noqa: F401
from .task import MultiLabelTaskLoss, UnobservedAsNegative  # noqa: F401
from .asymmetric import AsymmetricMultiLabelLoss, asymmetric_loss  # noqa: F401
from .focal import AsymmetricFocalLoss, SigmoidFocalLoss, sigmoid_focal_loss  # noqa: F401
from .missing_label import (FocalMarginLoss, HillLoss, SPLCLoss, focal_margin_loss,  # noqa: F401
                            hill_loss, splc_loss)
from .two_way import TwoWayMultiLabelLoss, two_way_loss  # noqa: F401
from .consistency import (ConsistencyLoss, SpatialConsistencyLoss,  # noqa: F401
                          consistency_distance, consistency_loss, read_heatmaps, write_heatmaps)
from .single_positive import (AssumeNegativeLoss, EntropyMaximisationLoss,  # noqa: F401
                              ExpectedPositivesLoss, ROLELoss, WeakAssumeNegativeLoss,
                              assume_negative, entropy_maximisation, expected_positives_loss,
                              role_loss)
