from .hooks import *  # noqa: F401,F403
from .optimizers import *  # noqa: F401,F403
from .runner import MLKDRunner, build_runner  # noqa: F401
from .schedulers import *  # noqa: F401,F403
