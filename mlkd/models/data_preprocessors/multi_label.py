"""The data preprocessor that builds the multi-label target once per batch."""

from __future__ import annotations

import torch
from mmpretrain.models.utils.data_preprocessor import ClsDataPreprocessor
from mmpretrain.structures import DataSample

from mlkd.registry import MODELS
from mlkd.utils.targets import check_batch_labels, mark_ignored


@MODELS.register_module()
class MultiLabelDataPreprocessor(ClsDataPreprocessor):
    """``ClsDataPreprocessor`` whose ``gt_score`` is the mlkd target: 1 / 0 / -1 (ignored).

    mmpretrain's preprocessor stacks the images and turns ``gt_label`` into a multi-hot
    ``gt_score`` (``to_onehot=True``, the default here; batch augmentations such as Mixup act on
    it). This one then marks the ignored classes (VOC difficult, unobserved labels; the rule is in
    :mod:`mlkd.utils.targets`) with -1, once for the batch, and stores the rows back as each
    sample's ``gt_score``. The head's task loss, the algorithms' ``gt`` and the metrics all read
    that ``gt_score``, so they agree on every entry.

    Task losses must therefore skip ``-1`` entries: mlkd's do (``BinaryCrossEntropySumLoss``);
    mmpretrain's multi-label losses do not, so use them only on data without ignored labels.

    A dataset that provides the full clean labels of a weakly labelled training set
    (``gt_label_full``) gets them as a multi-hot ``gt_full`` on each sample.

    The labels are validated here, once per batch and on the host before anything moves to the
    device (:func:`~mlkd.utils.targets.check_batch_labels`): class indices in range, a dataset's
    ``gt_score`` of the right length and hard (0 / 1) unless ``soft_targets=True``. The losses do
    not check their targets again (that would synchronise the device at every loss call).

    Args:
        to_onehot: build ``gt_score`` from ``gt_label`` (default True).
        soft_targets: accept targets in (0, 1) — a dataset's soft ``gt_score``, or the batch
            augmentations (Mixup, CutMix) that mix labels. Off by default: the losses that pick
            sets with ``gt == 1`` / ``gt == 0`` (Two-way, ASL, Focal, Hill, SPLC, the
            single-positive losses) would count a soft entry in neither set; BCE reads them.
        channels_last: hand the images on in channels-last memory order (same values, other
            strides). CPU convolutions (oneDNN) of small networks then run ~30 % faster
            (docs/demo.md); the kernels differ, so the last bits of a run do too. A teacher cache
            records it (:func:`~mlkd.teacher_cache.run_fingerprint`).
    """

    def __init__(
        self,
        *args,
        to_onehot: bool = True,
        soft_targets: bool = False,
        channels_last: bool = False,
        **kwargs,
    ) -> None:
        if kwargs.get('batch_augments') and not soft_targets:
            raise ValueError(
                'MultiLabelDataPreprocessor: batch_augments mix the labels into soft '
                'targets; set soft_targets=True (and train with a loss that reads '
                'soft targets, e.g. BinaryCrossEntropySumLoss)'
            )
        super().__init__(*args, to_onehot=to_onehot, **kwargs)
        self.soft_targets = bool(soft_targets)
        self.channels_last = bool(channels_last)

    def forward(self, data: dict, training: bool = False) -> dict:
        samples = data.get('data_samples')
        if samples and isinstance(samples[0], DataSample):
            check_batch_labels(samples, self.num_classes, self.soft_targets)
        data = super().forward(data, training)
        if self.channels_last:  # the parent always stacks (and pads) a [B, C, H, W] batch
            data['inputs'] = data['inputs'].contiguous(memory_format=torch.channels_last)
        samples = data.get('data_samples')
        if not samples or not isinstance(samples[0], DataSample) or 'gt_score' not in samples[0]:
            return data
        targets = mark_ignored(torch.stack([s.gt_score for s in samples]).float(), samples)
        num_classes = targets.shape[1]
        for sample, row in zip(samples, targets):
            sample.set_gt_score(row)
            full = sample.get('gt_label_full')
            if full is not None:
                sample.set_field(
                    row.new_zeros(num_classes).index_fill_(
                        0, row.new_tensor(full, dtype=torch.long), 1.0
                    ),
                    'gt_full',
                )
        return data
