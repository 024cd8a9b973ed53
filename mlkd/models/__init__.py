from . import (
    connectors,  # noqa: F401
    losses,  # noqa: F401
)
from .algorithms import *  # noqa: F401,F403
from .backbones import *  # noqa: F401,F403
from .bundled_weights import BundledPretrained  # noqa: F401
from .connectors import *  # noqa: F401,F403
from .data_preprocessors import *  # noqa: F401,F403
from .distillers import *  # noqa: F401,F403
from .heads import *  # noqa: F401,F403
