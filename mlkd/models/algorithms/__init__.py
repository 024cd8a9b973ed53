"""Algorithms: networks, taps, connectors and the routing of named tensors to losses."""

from .base import RoutedAlgorithm
from .classifier_with_losses import ClassifierWithLosses
from .global_batch import gather_batch
from .routing import ArgumentBinding, ConnectorRouter, LossRouter
from .taps import Taps

__all__ = [
    'ArgumentBinding',
    'ClassifierWithLosses',
    'ConnectorRouter',
    'LossRouter',
    'RoutedAlgorithm',
    'Taps',
    'gather_batch',
]
