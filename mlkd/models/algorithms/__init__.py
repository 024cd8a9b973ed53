"""Algorithms: networks, taps, connectors and the routing of named tensors to losses."""

from .base import RoutedAlgorithm
from .classifier_with_losses import ClassifierWithLosses
from .global_batch import gather_batch
from .loss_guard import DivergedTrainingError, LossDivergence, LossGuard, NonFiniteTrainingError
from .routing import ArgumentBinding, ConnectorRouter, LossRouter
from .taps import Taps

__all__ = [
    'ArgumentBinding',
    'ClassifierWithLosses',
    'ConnectorRouter',
    'DivergedTrainingError',
    'LossDivergence',
    'LossGuard',
    'LossRouter',
    'NonFiniteTrainingError',
    'RoutedAlgorithm',
    'Taps',
    'gather_batch',
]
