"""Contrastive terms for training a network (not distillation): the intra-class teacher."""

from .intra_class import (
    IntraClassContrastiveLoss,
    class_margins,  # noqa: F401
    intra_class_tuplet_loss,
)

__all__ = ['IntraClassContrastiveLoss', 'class_margins', 'intra_class_tuplet_loss']
