from .schedulers import *  # noqa: F401,F403
