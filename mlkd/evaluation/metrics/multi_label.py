"""Registered multi-label metrics (methods.md §6, architecture.md §7).

Both metrics keep one ``{'pred_score', 'target'}`` record per sample, because MMEngine's
``collect_results`` interleaves and truncates the per-rank lists by sample count; with
``collect_device='cpu'`` the records of all ranks are gathered and every number is computed on
the whole evaluation set, never per shard.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from mmengine.evaluator import BaseMetric
from torch import Tensor

from mlkd.evaluation.thresholds import check_label_set, read_thresholds_file
from mlkd.registry import METRICS
from mlkd.utils.targets import sample_target

from .functional import (
    CF1_MODES,
    average_precision,
    check_ap_policies,
    mean_of_ap,
    multilabel_prf,
    sample_average_precision,
)

__all__ = ['MultiLabelMetrics', 'SampleMAP']

_CONVENTIONS = ('threshold', 'topk', 'oracle_topk', 'calibrated')


def _sample_to_record(data_sample: dict) -> dict[str, Tensor]:
    """One data-sample dict → ``{'pred_score': float32 [C], 'target': int8 [C]}`` on CPU.

    The target is the one every loss reads (:mod:`mlkd.utils.targets`): the preprocessor's
    ``gt_score`` (1 / 0 / -1), or the same rule applied to ``gt_label``. Ignored (-1) entries —
    VOC difficult-only classes, unobserved labels — count in no metric. Whether VOC difficult
    objects are ignored, positive or negative is the dataset's ``difficult_policy``.
    """
    score = torch.as_tensor(data_sample['pred_score']).detach().to('cpu', torch.float32)
    num_classes = score.numel()
    target = torch.sign(sample_target(data_sample, num_classes).cpu())
    target = target.to(torch.int8)
    return {'pred_score': score.reshape(num_classes), 'target': target}


def _stack(results: Sequence[dict]) -> tuple[Tensor, Tensor]:
    scores = torch.stack([r['pred_score'] for r in results])
    targets = torch.stack([r['target'] for r in results])
    return scores, targets


@METRICS.register_module()
class MultiLabelMetrics(BaseMetric):
    """mAP plus CP, CR, CF1, OP, OR, OF1 under explicit, named conventions (values in percent).

    Args:
        thr: threshold of the ``'threshold'`` convention; predictions are ``pred_score >= thr``
            and ``pred_score`` holds sigmoid probabilities (as mmpretrain's multi-label heads
            store them).
        topk: k of the ``'topk'`` convention. Giving it switches that convention on even if
            ``conventions`` does not list it; listing ``'topk'`` without it is an error.
        conventions: any of ``'threshold'`` (keys ``*_thr<thr>``), ``'topk'`` (``*_top<k>``),
            ``'oracle_topk'`` (L2D's rule, keys ``*_oracle``) and ``'calibrated'`` (keys
            ``*_calib``, per-class thresholds of ``thresholds``).
        thresholds: a per-class thresholds file (JSON of
            ``tools/analysis_tools/calibrate_thresholds.py``, :mod:`mlkd.evaluation.thresholds`):
            class c is predicted where ``pred_score[c] >= thresholds[c]``. Giving it switches the
            ``'calibrated'`` convention on; listing that convention without it is an error. The
            file's label set must be the dataset's (``dataset_meta['classes']``), in order, else
            the evaluation fails naming both. The file is read at construction.
        cf1_mode: ``'harmonic'`` (CF1 = 2·CP·CR/(CP+CR), ML-GCN/ASL papers; key ``CF1_<tag>``) or
            ``'mean_of_class_f1'`` (mean of per-class F1, L2D's code / scikit-learn macro; key
            ``CF1macro_<tag>``).
        empty_policy: AP of a class without positives, ``'zero'`` or ``'exclude'``.
        tie_policy: equal scores in AP. ``'grouped'`` (default, scikit-learn): a tie group is one
            threshold, its positives share the group's precision, input order does not matter.
            ``'stable_sort'``: tied images ranked in evaluation order (the lower index first).
            The prediction rules break ties as :mod:`.functional` states: ``'topk'`` predicts
            the lower class indices among scores tied at the k-th place; ``'oracle_topk'``
            predicts no entry tied with the ``(k_i + 1)``-th score (L2D's code).
        collect_device: ``'cpu'`` or ``'gpu'`` for gathering results across ranks.
        prefix: optional key prefix; by default keys are bare (``mAP``, ``CF1_thr0.5``).

    After :meth:`compute_metrics`, ``self.last_per_class_ap`` holds the per-class AP as a float64
    numpy array ``[C]`` of **fractions** in ``[0, 1]`` (NaN for classes excluded by
    ``empty_policy='exclude'``; ``tools/test.py`` prints it ×100) and
    ``self.last_num_positives`` the number of positives per class, for tools that print a
    per-class table.
    """

    default_prefix: str | None = None

    def __init__(
        self,
        thr: float = 0.5,
        topk: int | None = None,
        conventions: Sequence[str] = ('threshold', 'oracle_topk'),
        thresholds: str | None = None,
        cf1_mode: str = 'harmonic',
        empty_policy: str = 'zero',
        tie_policy: str = 'grouped',
        collect_device: str = 'cpu',
        prefix: str | None = None,
    ) -> None:
        super().__init__(collect_device=collect_device, prefix=prefix)
        conventions = tuple(conventions)
        unknown = set(conventions) - set(_CONVENTIONS)
        if unknown:
            raise ValueError(f'unknown conventions {sorted(unknown)}; choose from {_CONVENTIONS}')
        if topk is not None:
            if int(topk) < 1:
                raise ValueError(f'topk must be >= 1, got {topk}')
            if 'topk' not in conventions:
                conventions = conventions + ('topk',)
        elif 'topk' in conventions:
            raise ValueError("the 'topk' convention needs topk=<k>")
        self.thresholds_file = None if thresholds is None else str(thresholds)
        self.class_thresholds: Tensor | None = None
        self._threshold_classes: list[str] = []
        if self.thresholds_file is not None:
            record = read_thresholds_file(self.thresholds_file)
            self.class_thresholds = torch.from_numpy(record['thresholds'])
            self._threshold_classes = record['classes']
            if 'calibrated' not in conventions:
                conventions = conventions + ('calibrated',)
        elif 'calibrated' in conventions:
            raise ValueError("the 'calibrated' convention needs thresholds=<thresholds file>")
        if cf1_mode not in CF1_MODES:
            raise ValueError(f'cf1_mode must be one of {CF1_MODES}, got {cf1_mode!r}')
        check_ap_policies(empty_policy, tie_policy)
        self.thr = float(thr)
        self.topk = None if topk is None else int(topk)
        self.conventions = conventions
        self.cf1_mode = cf1_mode
        self.empty_policy = empty_policy
        self.tie_policy = tie_policy
        self.last_per_class_ap: np.ndarray | None = None
        self.last_num_positives: np.ndarray | None = None

    def process(self, data_batch: Any, data_samples: Sequence[dict]) -> None:
        """Store one ``{'pred_score', 'target'}`` record per data-sample dict."""
        for data_sample in data_samples:
            self.results.append(_sample_to_record(data_sample))

    def _tag(self, convention: str) -> str:
        if convention == 'threshold':
            return f'thr{self.thr:g}'
        if convention == 'topk':
            return f'top{self.topk}'
        if convention == 'calibrated':
            return 'calib'
        return 'oracle'

    def _check_thresholds(self, num_classes: int) -> None:
        """The thresholds file fits the evaluated label set (names when the dataset has them)."""
        classes = (self.dataset_meta or {}).get('classes')
        if classes is not None:
            check_label_set(
                self._threshold_classes, classes, self.thresholds_file, 'the evaluated dataset'
            )
        if len(self._threshold_classes) != num_classes:
            raise ValueError(
                f'thresholds file {self.thresholds_file!r} holds {len(self._threshold_classes)} '
                f'thresholds but the scores have {num_classes} classes'
            )

    def compute_metrics(self, results: list) -> dict[str, float]:
        """Concatenate the records and return ``mAP`` and the per-convention P/R/F1 keys."""
        scores, targets = _stack(results)
        ap = average_precision(scores, targets, self.empty_policy, self.tie_policy)
        self.last_per_class_ap = ap.numpy()
        self.last_num_positives = (targets > 0).sum(0).numpy()
        metrics: dict[str, float] = {'mAP': mean_of_ap(ap)}
        cf1_name = 'CF1macro' if self.cf1_mode in ('mean_of_class_f1', 'macro') else 'CF1'
        if self.class_thresholds is not None:
            self._check_thresholds(scores.shape[1])
        for convention in self.conventions:
            if convention == 'calibrated':  # the threshold rule with one threshold per class
                values = multilabel_prf(
                    scores.double(),
                    targets,
                    'threshold',
                    thr=self.class_thresholds,
                    cf1_mode=self.cf1_mode,
                )
            else:
                values = multilabel_prf(
                    scores,
                    targets,
                    convention,
                    thr=self.thr,
                    k=self.topk or 0,
                    cf1_mode=self.cf1_mode,
                )
            tag = self._tag(convention)
            for name in ('CP', 'CR', 'CF1', 'OP', 'OR', 'OF1'):
                key = cf1_name if name == 'CF1' else name
                metrics[f'{key}_{tag}'] = values[name]
        return metrics


@METRICS.register_module()
class SampleMAP(BaseMetric):
    """mAP@sample and mAP@class, as in the Two-way tables (values in percent).

    ``self.last_per_class_ap`` keeps the per-class AP (fractions, NaN where excluded) as in
    :class:`MultiLabelMetrics`.

    mAP@sample ranks the classes of each image; mAP@class ranks the images of each class. With the
    default ``empty_policy='exclude'`` samples (and classes) without a positive drop out of the
    mean, as in the Two-way code.

    Args:
        empty_policy: ``'exclude'`` or ``'zero'``, applied to both means.
        tie_policy: equal scores, in both rankings. ``'grouped'`` (default, scikit-learn): a tie
            group is one threshold and input order does not matter. ``'stable_sort'``: tied
            entries ranked in input order (the lower class index first within an image, the
            lower evaluation index first within a class).
        collect_device: ``'cpu'`` or ``'gpu'``.
        prefix: optional key prefix; keys are bare by default.
    """

    default_prefix: str | None = None

    def __init__(
        self,
        empty_policy: str = 'exclude',
        tie_policy: str = 'grouped',
        collect_device: str = 'cpu',
        prefix: str | None = None,
    ) -> None:
        super().__init__(collect_device=collect_device, prefix=prefix)
        check_ap_policies(empty_policy, tie_policy)
        self.empty_policy = empty_policy
        self.tie_policy = tie_policy
        self.last_per_class_ap: np.ndarray | None = None

    def process(self, data_batch: Any, data_samples: Sequence[dict]) -> None:
        """Store one ``{'pred_score', 'target'}`` record per data-sample dict."""
        for data_sample in data_samples:
            self.results.append(_sample_to_record(data_sample))

    def compute_metrics(self, results: list) -> dict[str, float]:
        """Return ``mAP@sample`` and ``mAP@class``."""
        scores, targets = _stack(results)
        per_sample = sample_average_precision(scores, targets, self.empty_policy, self.tie_policy)
        per_class = average_precision(scores, targets, self.empty_policy, self.tie_policy)
        self.last_per_class_ap = per_class.numpy()
        return {'mAP@sample': mean_of_ap(per_sample), 'mAP@class': mean_of_ap(per_class)}
