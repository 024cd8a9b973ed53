from .basic import ConvBNConnector, IdentityConnector, LinearConnector
from .embed import EmbedConnector
from .hint import HintConnector
from .ofd import OFDConnector
from .pool import GlobalPoolConnector, TokenMapConnector
from .review import ABFConnector
from .stagewise import StagewiseConnector
from .vid import VIDRegressorConnector

__all__ = [
    'ABFConnector',
    'ConvBNConnector',
    'EmbedConnector',
    'HintConnector',
    'GlobalPoolConnector',
    'IdentityConnector',
    'LinearConnector',
    'OFDConnector',
    'StagewiseConnector',
    'TokenMapConnector',
    'VIDRegressorConnector',
]
