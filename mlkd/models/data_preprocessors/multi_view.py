"""Batch several augmented views of each image (weak / strong) for distillation."""

from __future__ import annotations

import torch

from mlkd.registry import MODELS

from .multi_label import MultiLabelDataPreprocessor


@MODELS.register_module()
class MultiViewClsDataPreprocessor(MultiLabelDataPreprocessor):
    """:class:`MultiLabelDataPreprocessor` for batches whose samples hold a list of views.

    mmpretrain's ``MultiView`` transform (or mlkd's ``AnchorPositiveViews``) followed by
    ``PackInputs`` gives each sample a list of view tensors, and the data loader's collate
    (mmengine's ``pseudo_collate``, transposing sequences) turns a batch of them into one sequence
    per view: ``inputs = [view 0 of every sample, view 1 of every sample, ...]``. mmpretrain's
    ``ClsDataPreprocessor`` mishandles that (after stacking, the views form a 5-D tensor and the
    BGR->RGB flip, which tests ``size(0) == 3``, is silently skipped). This preprocessor normalises
    each view separately and returns ``inputs`` as a list of ``[B, 3, H, W]`` tensors, one per
    view, with the targets built once. Single-view batches (evaluation) pass through the parent
    unchanged.

    Batch augmentations (Mixup, CutMix) would mix each view differently; they are rejected.

    Raises:
        ValueError: the views hold different numbers of images, or not one per data sample (a
            batch given sample by sample, ``[[view 0, view 1], ...]``, is refused that way when
            its size differs from the number of views).
    """

    def __init__(self, *args, **kwargs) -> None:
        if kwargs.get('batch_augments'):
            raise ValueError('MultiViewClsDataPreprocessor does not support batch_augments')
        super().__init__(*args, **kwargs)

    def forward(self, data: dict, training: bool = False) -> dict:
        inputs = data['inputs']
        if isinstance(inputs, torch.Tensor) or not isinstance(inputs[0], (list, tuple)):
            return super().forward(data, training)
        samples = data.get('data_samples')
        sizes = [len(view) for view in inputs]
        expected = len(samples) if samples is not None else sizes[0]
        if any(size != expected for size in sizes):
            raise ValueError(
                f'a multi-view batch needs one image per sample in every view (the '
                f'collated layout [view][sample]); got views of {sizes} images for '
                f'{expected} samples'
            )
        first = super().forward({'inputs': list(inputs[0]), 'data_samples': samples}, training)
        batched = [first['inputs']]
        for view in inputs[1:]:
            batched.append(super().forward({'inputs': list(view)}, training)['inputs'])
        return {'inputs': batched, 'data_samples': first['data_samples']}
