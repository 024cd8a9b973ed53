from . import functional
from .dump import DumpScores, load_score_dump
from .fidelity import DistillFidelity, fidelity_metrics
from .functional import (
    average_precision,
    confusion_counts,
    mean_average_precision,
    mean_of_ap,
    multilabel_prf,
    oracle_topk_predictions,
    prf_from_counts,
    sample_average_precision,
    threshold_predictions,
    topk_predictions,
)
from .multi_label import MultiLabelMetrics, SampleMAP

__all__ = [
    'DistillFidelity',
    'DumpScores',
    'fidelity_metrics',
    'load_score_dump',
    'MultiLabelMetrics',
    'SampleMAP',
    'functional',
    'average_precision',
    'sample_average_precision',
    'mean_average_precision',
    'mean_of_ap',
    'threshold_predictions',
    'topk_predictions',
    'oracle_topk_predictions',
    'confusion_counts',
    'prf_from_counts',
    'multilabel_prf',
]
