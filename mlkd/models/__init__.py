from . import losses  # noqa: F401
from .heads import *  # noqa: F401,F403
