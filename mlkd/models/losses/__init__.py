"""mlkd's losses, by contract (``base``) and by family.

* :mod:`.base` — the contracts :class:`TaskLoss`, :class:`RoutedLoss`, :class:`StatefulLoss`;
* :mod:`.weight_reference` — weights given for a reference setting, a policy a loss opts in to
  (:class:`ReferenceWeighted`);
* :mod:`.task` — task losses (BCE, ASL, focal, Two-way, Hill, SPLC, focal margin, WARP, RML,
  multi-label softmax);
* :mod:`.logit_kd` — logit distillation (KD, DKD, MLLD, MLD, PS / PD, NDD, L2D, MSE, MDKD);
* :mod:`.feature_kd` — feature and relation distillation (FitNet, AT, OFD, ReviewKD, VID, CRD,
  RKD, PKT);
* :mod:`.single_positive` — single-positive / partial-label training (AN, WAN, EPR, ROLE, EM, CL,
  SCL);
* :mod:`.contrastive` — contrastive terms for training a network (the intra-class teacher);
* :mod:`.utils` — the numerical primitives they share.
"""

from .base import (
    RoutedLoss,  # noqa: F401
    StatefulLoss,  # noqa: F401
    StateSizeError,  # noqa: F401
    TaskLoss,  # noqa: F401
    as_fp32,  # noqa: F401
    full_precision,  # noqa: F401
)
from .contrastive import *  # noqa: F401,F403
from .feature_kd import *  # noqa: F401,F403
from .logit_kd import *  # noqa: F401,F403
from .single_positive import *  # noqa: F401,F403
from .task import *  # noqa: F401,F403
from .weight_reference import PAPER_REFERENCE, ReferenceWeighted  # noqa: F401
