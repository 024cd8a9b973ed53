from . import functional
from .dump import DumpScores, load_score_dump
from .fidelity import DistillFidelity, fidelity_metrics
from .functional import *  # noqa: F403  (the metric functions, listed once in functional.__all__)
from .multi_label import MultiLabelMetrics, SampleMAP

__all__ = [
    'DistillFidelity',
    'DumpScores',
    'fidelity_metrics',
    'load_score_dump',
    'MultiLabelMetrics',
    'SampleMAP',
    'functional',
    *functional.__all__,
]
