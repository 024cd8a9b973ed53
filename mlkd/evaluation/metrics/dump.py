"""Write every prediction of an evaluation run to disk (``tools/test.py --out``)."""

from __future__ import annotations

import os.path as osp
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from mmengine.evaluator import BaseMetric

from mlkd.registry import METRICS
from mlkd.utils.atomic import atomic_write
from mlkd.utils.targets import sample_target


@METRICS.register_module()
class DumpScores(BaseMetric):
    """Save scores and labels of the whole evaluation set to an ``.npz`` file.

    The file holds ``scores`` ``[N, C]`` (the model's ``pred_score``), ``labels`` ``[N, C]``
    (1 positive, 0 negative, -1 difficult/ignored, or ``[N]`` class indices for single-label data)
    and ``sample_idx`` ``[N]``, in dataset order when all ranks are gathered. Returns no metric.

    Args:
        out_file: destination path ending in ``.npz``; its folder is created. It is written
            atomically (complete or not at all).
    """

    default_prefix = None

    def __init__(self, out_file: str, collect_device: str = 'cpu', prefix: str | None = None):
        if not str(out_file).endswith('.npz'):
            raise ValueError(f'DumpScores.out_file must end with .npz, got {out_file!r}')
        super().__init__(collect_device=collect_device, prefix=prefix)
        self.out_file = out_file

    def process(self, data_batch: Any, data_samples: Sequence[dict]) -> None:
        for sample in data_samples:
            score = sample['pred_score']
            label = sample_target(sample, score.numel()).cpu()
            self.results.append(
                (score.cpu().float(), label.cpu(), int(sample.get('sample_idx', len(self.results))))
            )

    def compute_metrics(self, results: list) -> dict:
        scores = torch.stack([r[0] for r in results]).numpy()
        labels = torch.stack([r[1] for r in results]).numpy()
        sample_idx = np.asarray([r[2] for r in results])
        # Written beside the destination and renamed: a crash leaves no half-written file.
        with atomic_write(self.out_file) as file:
            np.savez(file, scores=scores, labels=labels, sample_idx=sample_idx)
        return {}


def load_score_dump(path: str) -> dict[str, np.ndarray]:
    """Read a :class:`DumpScores` file; rows sorted by ``sample_idx`` (dataset order).

    Returns:
        dict with ``scores`` ``[N, C]``, ``labels`` (``[N, C]`` or ``[N]``) and ``sample_idx``
        ``[N]``.

    Raises:
        FileNotFoundError / ValueError naming the file and the missing key or bad shape.
    """
    if not osp.isfile(path):
        raise FileNotFoundError(
            f'score dump {path!r} not found (write one with tools/test.py CONFIG CKPT --out {path})'
        )
    with np.load(path, allow_pickle=False) as data:
        missing = [k for k in ('scores', 'labels', 'sample_idx') if k not in data]
        if missing:
            raise ValueError(f'{path}: not a DumpScores file, keys {missing} are missing')
        dump = {k: data[k] for k in ('scores', 'labels', 'sample_idx')}
    if (
        dump['scores'].ndim != 2
        or len(dump['labels']) != len(dump['scores'])
        or dump['sample_idx'].shape != (len(dump['scores']),)
    ):
        raise ValueError(
            f'{path}: scores {dump["scores"].shape}, labels '
            f'{dump["labels"].shape} and sample_idx {dump["sample_idx"].shape} '
            f'do not describe the same N samples'
        )
    order = np.argsort(dump['sample_idx'], kind='stable')
    return {k: v[order] for k, v in dump.items()}
