from .label_embedding import (ClassAwareDistillLoss, InstanceAwareDistillLoss,  # noqa: F401
                              LabelEmbeddingDistillLoss, class_aware_distance_loss,
                              grouped_huber_distance_loss, instance_aware_distance_loss,
                              pairwise_huber_distance_loss)
from .mdkd import MultiOrderDependencyLoss  # noqa: F401
