"""FitNet hints: Romero et al., "FitNets: Hints for Thin Deep Nets", ICLR 2015; the hint loss as
mdistiller (``docs/methods.md`` §5.6.4). The hint regressor is a connector
(:class:`~mlkd.models.connectors.HintConnector`); this loss only compares its output with the
teacher feature.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from mlkd.registry import MODELS

from ..base import RoutedLoss
from ..utils import check_choice, check_stage_counts, current_epoch, stage_list

FITNET_STAGES = ('joint', 'two_stage')


def hint_mse(
    s_feats: torch.Tensor | Sequence[torch.Tensor], t_feats: torch.Tensor | Sequence[torch.Tensor]
) -> torch.Tensor:
    """FitNet hint loss: ``Σ_stages mean((r(F^s) − F^t)²)``, ``r`` the regressor (connector).

    Args:
        s_feats: connector output(s), each the same shape as the teacher's.
        t_feats: teacher feature(s) (detached here).
    """
    s_list, t_list = stage_list(s_feats), stage_list(t_feats)
    check_stage_counts(s_list, t_list, 'hint_mse')
    loss = s_list[0].new_zeros(())
    for s, t in zip(s_list, t_list):
        if s.shape != t.shape:
            raise ValueError(
                f'hint_mse: connector output {tuple(s.shape)} does not match the '
                f'teacher feature {tuple(t.shape)}; size the hint connector by the '
                f'teacher feature'
            )
        loss = loss + F.mse_loss(s, t.detach())
    return loss


@MODELS.register_module()
class FitNetLoss(RoutedLoss):
    """FitNet hint loss (:func:`hint_mse`) on the output of a hint connector.

    ``stage`` chooses the schedule:

    * ``'joint'`` (default, as mdistiller): the hint loss is added to the task loss at every step
      (mdistiller: hint layer 2, feature weight 100, CE weight 1).
    * ``'two_stage'`` (the paper): during the first ``hint_epochs`` epochs (0-based epoch read from
      MMEngine's ``MessageHub``) the hint loss has weight ``loss_weight``; from then on it is 0 and
      the rest of the configured losses train the student. The paper's stage 1 trains *only* the
      layers up to the guided one with the hint: express that in the config by giving the other
      losses the complementary schedule (e.g. the task loss weight of 0 for the first
      ``hint_epochs``), the optimizer does not need to change because the hint's gradient reaches
      only the layers below the hint.

    Args:
        stage: ``'joint'`` or ``'two_stage'``.
        hint_epochs: length of stage 1 for ``'two_stage'`` (required there, > 0).
        loss_weight: factor applied to the loss.
    """

    repr_fields = ('stage', 'hint_epochs')

    def __init__(
        self, stage: str = 'joint', hint_epochs: int | None = None, loss_weight: float = 1.0
    ) -> None:
        super().__init__(loss_weight)
        self.stage = check_choice('stage', stage, FITNET_STAGES)
        if stage == 'two_stage' and (hint_epochs is None or hint_epochs <= 0):
            raise ValueError(
                f"FitNetLoss: stage='two_stage' needs hint_epochs > 0, got {hint_epochs}"
            )
        self.hint_epochs = hint_epochs

    def stage_weight(self, epoch: int | None = None) -> float:
        """1 for ``'joint'``; for ``'two_stage'`` 1 while ``epoch < hint_epochs``, else 0.

        Args:
            epoch: 0-based epoch; read from the ``MessageHub`` when None (no recorded epoch counts
                as stage 1).
        """
        if self.stage == 'joint':
            return 1.0
        epoch = current_epoch() if epoch is None else epoch
        return 1.0 if epoch is None or epoch < self.hint_epochs else 0.0

    def compute(
        self,
        s_feats: torch.Tensor | Sequence[torch.Tensor],
        t_feats: torch.Tensor | Sequence[torch.Tensor],
    ) -> torch.Tensor:
        """Args:
        s_feats: hint connector output ``[B, C_t, H_t, W_t]`` (or a list).
        t_feats: teacher feature(s) of the same shape.
        """
        return hint_mse(s_feats, t_feats)

    def weight_factor(self) -> float:
        return self.stage_weight()
