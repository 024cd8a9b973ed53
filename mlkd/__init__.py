"""mlkd: multi-label knowledge distillation on MMEngine and mmpretrain."""
from .utils.version_check import check_versions
from .version import __version__

check_versions()

from .utils import compat  # noqa: E402

compat.apply()

from .registry import register_all_modules  # noqa: E402

__all__ = ['__version__', 'register_all_modules']
