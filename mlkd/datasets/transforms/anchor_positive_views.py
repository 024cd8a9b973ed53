"""The anchor ``x`` and its augmented positive ``x⁺``: two independent augmentations of one image.

The intra-class contrastive teacher of "Enriching Knowledge Distillation with Intra-Class
Contrastive Learning" (anonymous ICLR submission, §3.1–3.2) contrasts each anchor ``x`` with
"an augmented version of x" as its positive and with other samples of its class as negatives. The
paper does not say which augmentation makes ``x⁺`` nor whether ``x`` itself is augmented; mlkd
draws both views from the same training augmentation, independently (the dataset bases
``configs/_base_/datasets/*_anchor_positive.py`` say which one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mmpretrain.datasets.transforms import MultiView

from mlkd.registry import TRANSFORMS

__all__ = ['AnchorPositiveViews']


@TRANSFORMS.register_module()
class AnchorPositiveViews(MultiView):
    """Run ``transforms`` twice on copies of the sample: ``img`` becomes ``[anchor, positive]``.

    mmpretrain's ``MultiView`` with one pipeline and two views, named for its use and checked:
    ``PackInputs`` then packs ``inputs`` as a list of two ``[C, H, W]`` tensors, which
    :class:`~mlkd.models.data_preprocessors.MultiViewClsDataPreprocessor` normalises view by view
    into ``inputs = [anchor batch, positive batch]``, each ``[B, C, H, W]``, with the labels built
    once (the views share them). Only ``img`` differs between the views; every other key of the
    sample (label, index, file name) is the one sample's.

    Randomness: the views are drawn one after the other from the random generators the transforms
    use (numpy's, ``random``, torch's), anchor first. Under mlkd's keyed sampling
    (:mod:`mlkd.utils.sample_seed`, :class:`~mlkd.datasets.EpochKeyedSampler`) those are seeded
    from ``(seed, epoch, sample index)`` for the whole fetch, so both views are a function of that
    key alone (worker count, process count and resumption change nothing), and the anchor is
    exactly the sample the same ``transforms`` would give as a single-view pipeline under that
    key; the positive is the next, independent draw.

    Args:
        transforms: the augmentation (transform configs or callables), applied to each view. It
            must be random for the views to differ; nothing here can check that.

    Required keys: ``img`` and whatever ``transforms`` read. Modified keys: ``img`` (a list of the
    two augmented arrays, anchor first).

    Raises:
        ValueError: ``transforms`` is empty (the positive would be the anchor itself), or the two
            views come out with different shapes (they could not be batched), naming the shapes.
    """

    #: what index 0 and 1 of ``img`` (and of the preprocessed ``inputs``) hold
    VIEW_NAMES = ('anchor', 'positive')

    def __init__(self, transforms: Sequence[dict | Callable]) -> None:
        if isinstance(transforms, (dict, str)) or not transforms:
            raise ValueError(
                'AnchorPositiveViews needs a non-empty list of augmentation '
                f'transforms to make the positive view, got {transforms!r}'
            )
        super().__init__(transforms=[list(transforms)], num_views=len(self.VIEW_NAMES))

    def transform(self, results: dict) -> dict:
        """``img`` -> ``[anchor, positive]``, each the output of ``transforms`` on a copy."""
        results = super().transform(results)
        anchor, positive = results['img']
        if anchor.shape != positive.shape:
            raise ValueError(
                f'AnchorPositiveViews: the anchor view has shape {anchor.shape} but '
                f'the positive {positive.shape} (sample {results.get("sample_idx")}, '
                f'{results.get("img_path", "in-memory image")}); the augmentation '
                'must give a fixed output size'
            )
        return results

    def __repr__(self) -> str:
        return f'{type(self).__name__}(transforms={self.pipelines[0]!r})'
