"""Per-class decision thresholds chosen on validation data, and the JSON file that carries them.

The papers report CP / CR / CF1 / OP / OR / OF1 at one threshold, 0.5, for every class. A deployed
tagger uses one threshold per class, chosen on the validation split:
:func:`f1_optimal_thresholds` picks, for each class, the threshold that maximises that class's F1
(``2TP / (2TP + FP + FN)``, predictions ``score >= threshold``), with these rules:

* **Candidates.** Only the gaps between distinct validation scores matter: every threshold in
  ``(s_next, s]`` (``s`` a validation score, ``s_next`` the next lower one) makes the same
  predictions. The threshold returned for the best gap is its **midpoint** ``(s + s_next) / 2``
  (``s / 2`` below the lowest score), so that it sits on no validation score; it is rounded to a
  float32 value that still lies in the gap (or ``s`` itself where the gap is narrower than float32
  resolution), so the predictions are the same whether scores are compared in float32 or
  float64.
* **Ties.** Where several gaps reach the same, highest F1, the **highest** threshold wins (the
  fewest predicted labels: the same F1 with fewer false positives to review).
* **Classes without positives** on the validation split (or with every entry ignored): F1 is 0
  at any threshold, so nothing can be chosen; the class keeps ``default`` (0.5 unless given) and
  is marked not calibrated (``calibrated[c]`` False, ``f1[c]`` NaN). The tools list such classes.
* Ignored targets (``-1``, e.g. VOC difficult-only labels) count nowhere, as in the metrics.

The file (:func:`save_thresholds` / :func:`load_thresholds`) is JSON::

    {"format": "mlkd.thresholds/1",
     "classes": ["0", "1", ...],          # the label set, in the model's order
     "thresholds": [0.43, 0.61, ...],     # one per class, apply as score >= threshold
     "calibrated": [true, true, ...],     # false: no positives on val, the default was kept
     "default": 0.5, "rule": "...",       # how they were chosen
     ...}                                 # provenance: config, its fingerprint, checkpoint, split

and is refused, naming both label sets, by a model or dataset of another label set.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    'THRESHOLDS_FORMAT',
    'ThresholdCalibration',
    'ThresholdsFileError',
    'f1_optimal_thresholds',
    'thresholds_record',
    'save_thresholds',
    'load_thresholds',
    'check_label_set',
]

#: The ``format`` value of a thresholds file.
THRESHOLDS_FORMAT = 'mlkd.thresholds/1'
#: The ``rule`` value written into the file: how the thresholds were chosen.
RULE = (
    'per class, the threshold maximising F1 (score >= threshold) on the calibration split: the '
    'midpoint between adjacent distinct scores (half the lowest score below it); ties go to the '
    'highest threshold; classes without positives keep the default'
)


class ThresholdsFileError(ValueError):
    """A thresholds file that cannot be read, or was made for another label set."""


@dataclass
class ThresholdCalibration:
    """What :func:`f1_optimal_thresholds` chose, per class (all arrays ``[C]``).

    Attributes:
        thresholds: float64 values that are exactly float32 numbers; apply as ``score >= thr``.
        f1: the class's F1 at its threshold on the calibration data (fraction; NaN where not
            calibrated).
        num_positives: positives per class in the calibration data.
        calibrated: False where the class had no positives and kept the default.
        default: the threshold kept by uncalibrated classes.
    """

    thresholds: np.ndarray
    f1: np.ndarray
    num_positives: np.ndarray
    calibrated: np.ndarray
    default: float


def _as_numpy(array) -> np.ndarray:
    if hasattr(array, 'detach'):  # a torch tensor
        array = array.detach().cpu().numpy()
    return np.asarray(array)


def f1_optimal_thresholds(scores, targets, default: float = 0.5) -> ThresholdCalibration:
    """Per class, the threshold maximising F1 on ``(scores, targets)`` (rules: module docstring).

    Vectorised over classes: one sort of the ``[N, C]`` scores, cumulative counts, one argmax.

    Args:
        scores: ``[N, C]`` probabilities in ``[0, 1]`` (numpy array or tensor).
        targets: ``[N, C]``: ``> 0`` positive, ``0`` negative, ``< 0`` ignored.
        default: threshold kept by classes without positives.

    Returns:
        :class:`ThresholdCalibration`.

    Raises:
        ValueError: for shapes that differ or are not 2-D, non-finite scores, or scores outside
            ``[0, 1]`` (logits: apply the sigmoid first).
    """
    scores = _as_numpy(scores).astype(np.float64)
    targets = _as_numpy(targets)
    if scores.ndim != 2 or scores.shape != targets.shape:
        raise ValueError(
            f'scores and targets must both be [N, C]; got {scores.shape} and {targets.shape}'
        )
    if not np.isfinite(scores).all():
        raise ValueError('scores hold NaN or infinite values')
    if scores.size and (scores.min() < 0 or scores.max() > 1):
        raise ValueError(
            f'scores must be probabilities in [0, 1] (got {scores.min():g} .. {scores.max():g}); '
            'apply the sigmoid to logits first'
        )
    num_samples, num_classes = scores.shape
    valid, positive = targets >= 0, targets > 0
    num_positives = positive.sum(0)
    # Ignored entries sort last (-inf) and are never a cut.
    ranked = np.where(valid, scores, -np.inf)
    order = np.argsort(-ranked, axis=0, kind='stable')
    sorted_scores = np.take_along_axis(ranked, order, 0)
    tp = np.cumsum(np.take_along_axis(positive, order, 0), axis=0)
    predicted = np.arange(1, num_samples + 1)[:, None]
    # F1 = 2TP / (2TP + FP + FN) = 2TP / (predicted + positives)
    f1 = 2 * tp / (predicted + num_positives[None, :]).clip(min=1)
    below = np.concatenate([sorted_scores[1:], np.full((1, num_classes), -np.inf)])
    is_cut = np.isfinite(sorted_scores) & (sorted_scores > below)  # the end of a tie group
    f1 = np.where(is_cut, f1, -1.0)
    best = np.argmax(f1, axis=0) if num_samples else np.zeros(num_classes, dtype=np.int64)
    columns = np.arange(num_classes)
    calibrated = num_positives > 0
    thresholds = np.full(num_classes, float(np.float32(default)), dtype=np.float64)
    best_f1 = np.full(num_classes, np.nan)
    if num_samples and calibrated.any():
        high = sorted_scores[best, columns]
        low = np.where(np.isfinite(below[best, columns]), below[best, columns], 0.0)
        low = np.where(calibrated, low, 0.0)
        high = np.where(calibrated, high, 1.0)
        middle = ((high + low) / 2).astype(np.float32)
        # float32 rounding may land the midpoint on `low` (a gap under float32 resolution): the
        # group's own score is then the threshold that keeps the same predictions.
        chosen = np.where(middle > low.astype(np.float32), middle, high.astype(np.float32))
        thresholds = np.where(calibrated, chosen.astype(np.float64), thresholds)
        best_f1 = np.where(calibrated, f1[best, columns], np.nan)
    return ThresholdCalibration(
        thresholds=thresholds,
        f1=best_f1,
        num_positives=num_positives.astype(np.int64),
        calibrated=calibrated,
        default=float(default),
    )


def thresholds_record(
    calibration: ThresholdCalibration,
    classes: Sequence[str],
    provenance: Mapping | None = None,
) -> dict:
    """The JSON-ready dictionary of a thresholds file (see the module docstring).

    Args:
        calibration: what :func:`f1_optimal_thresholds` returned.
        classes: the class names, in the model's order (``C`` of them).
        provenance: extra keys recorded as they are (config, fingerprint, checkpoint, split...).

    Raises:
        ValueError: when ``classes`` and the thresholds differ in length.
    """
    classes = [str(c) for c in classes]
    if len(classes) != len(calibration.thresholds):
        raise ValueError(f'{len(calibration.thresholds)} thresholds for {len(classes)} class names')
    record = {
        'format': THRESHOLDS_FORMAT,
        'classes': classes,
        'thresholds': [float(t) for t in calibration.thresholds],
        'calibrated': [bool(c) for c in calibration.calibrated],
        'val_f1': [None if np.isnan(f) else float(f) for f in calibration.f1],
        'num_positives': [int(n) for n in calibration.num_positives],
        'default': calibration.default,
        'rule': RULE,
    }
    for key, value in (provenance or {}).items():
        record.setdefault(key, value)
    return record


def save_thresholds(path: str | os.PathLike, record: Mapping, **policy) -> None:
    """Write a :func:`thresholds_record` to ``path`` as JSON, under the output policy
    (:func:`mlkd.utils.output_policy.write_text`; ``policy``: ``overwrite``, ``inputs``)."""
    from mlkd.utils.output_policy import write_text

    write_text(path, json.dumps(dict(record), indent=1) + '\n', **policy)


def read_thresholds_file(path: str | os.PathLike) -> dict:
    """The checked contents of a thresholds file (classes, thresholds and the rest).

    Raises:
        FileNotFoundError: naming the path.
        ThresholdsFileError: not JSON, not a thresholds file, or inconsistent lengths / values.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f'thresholds file not found: {path!r}')
    try:
        with open(path, encoding='utf-8') as f:
            record = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ThresholdsFileError(f'thresholds file {path!r} is not JSON: {error}') from None
    if not isinstance(record, dict) or record.get('format') != THRESHOLDS_FORMAT:
        raise ThresholdsFileError(
            f'{path!r} is not a thresholds file (expected "format": "{THRESHOLDS_FORMAT}"; '
            'write one with tools/analysis_tools/calibrate_thresholds.py)'
        )
    classes, thresholds = record.get('classes'), record.get('thresholds')
    if not isinstance(classes, list) or not isinstance(thresholds, list):
        raise ThresholdsFileError(f'{path!r}: "classes" and "thresholds" must be lists')
    if len(classes) != len(thresholds):
        raise ThresholdsFileError(
            f'{path!r}: {len(thresholds)} thresholds for {len(classes)} classes'
        )
    values = np.asarray(thresholds, dtype=np.float64)
    if not np.isfinite(values).all():
        raise ThresholdsFileError(f'{path!r}: thresholds must be finite numbers')
    record['classes'] = [str(c) for c in classes]
    record['thresholds'] = values
    return record


def check_label_set(
    file_classes: Sequence[str], classes: Sequence[str], source: str, target: str
) -> None:
    """Raise :class:`ThresholdsFileError` unless the two label sets are the same, in order.

    The message names ``source`` (the thresholds file) and ``target`` (the model or dataset), the
    sizes, and the first positions that differ.
    """
    file_classes, classes = [str(c) for c in file_classes], [str(c) for c in classes]
    if file_classes == classes:
        return
    if len(file_classes) != len(classes):
        detail = f'{len(file_classes)} classes vs {len(classes)}'
    else:
        differ = [
            f'#{i}: {a!r} vs {b!r}' for i, (a, b) in enumerate(zip(file_classes, classes)) if a != b
        ]
        detail = 'first differences ' + ', '.join(differ[:5])
    raise ThresholdsFileError(
        f'thresholds file {source!r} was calibrated for another label set than {target} '
        f'({detail}); calibrate thresholds for this model'
    )


def load_thresholds(
    path: str | os.PathLike, classes: Sequence[str] | None = None, target: str = 'the model'
) -> np.ndarray:
    """The per-class thresholds of a file (float64 ``[C]``), checked against ``classes``.

    Args:
        path: a file written by :func:`save_thresholds`.
        classes: the label set it must have been made for (names, in order); ``None`` skips the
            check.
        target: how the error message names what ``classes`` belongs to.

    Raises:
        FileNotFoundError, ThresholdsFileError: see :func:`read_thresholds_file` and
            :func:`check_label_set`.
    """
    record = read_thresholds_file(path)
    if classes is not None:
        check_label_set(record['classes'], classes, os.fspath(path), target)
    return record['thresholds']
