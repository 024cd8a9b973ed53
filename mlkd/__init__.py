"""mlkd: multi-label knowledge distillation on MMEngine and mmpretrain."""

import warnings

# mmcv-lite has no compiled ops; mmpretrain imports mmcv's transformer module, which warns about a
# deformable-attention op that mlkd never uses.
warnings.filterwarnings('ignore', message='Fail to import ``MultiScaleDeformableAttention``')
from .utils.version_check import check_versions  # noqa: E402
from .version import __version__  # noqa: E402

check_versions()

from .utils import compat  # noqa: E402

compat.apply()

from .registry import register_all_modules  # noqa: E402

__all__ = ['__version__', 'register_all_modules']
