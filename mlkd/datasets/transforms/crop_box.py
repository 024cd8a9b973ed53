"""RandomResizedCrop that records where its crop lies in the original image.

The spatial consistency loss (Verelst et al., WACV 2023; ``docs/methods.md`` §3.3) keeps one
heatmap per training image in the *full-image* frame and compares it with the class maps of each
random crop, so it must know which part of the image every crop shows. mmpretrain's
``RandomResizedCrop`` does not say; this subclass draws the crop exactly as it does and adds

* ``crop_box``: ``np.float32 [4]`` = ``(x1, y1, x2, y2)``, the crop in pixels of the **original**
  image (``ori_shape``), exclusive ends: output pixel column ``j`` of an output of width ``S``
  shows original column ``x1 + (j + 0.5)·(x2 − x1)/S − 0.5`` (the half-pixel convention of
  OpenCV's and mmcv's resize).

Transforms before it may only resize the whole image (e.g. the SCL recipe's square resize to 672):
the box is mapped back to ``ori_shape`` by the ratio of the current and the original image size.
A random horizontal flip after it sets ``flip`` (mmcv's ``RandomFlip``); both travel to the model
with ``PackInputs(meta_keys=(..., 'crop_box', 'flip'))`` (``flip`` is in the default keys).
"""

from __future__ import annotations

import mmcv
import numpy as np
from mmpretrain.datasets.transforms import PackInputs, RandomResizedCrop

from mlkd.registry import TRANSFORMS

__all__ = ['RandomResizedCropWithBox', 'CROP_META_KEYS']

#: ``PackInputs`` meta keys that carry the crop geometry to the model: mmpretrain's default keys
#: (``flip`` among them) and ``crop_box``.
CROP_META_KEYS = (*PackInputs.DEFAULT_META_KEYS, 'crop_box')


@TRANSFORMS.register_module()
class RandomResizedCropWithBox(RandomResizedCrop):
    """mmpretrain's ``RandomResizedCrop`` (same draws, same output) plus ``crop_box``.

    Required keys: ``img``, ``ori_shape`` (``(H, W)`` of the image as loaded). Modified keys:
    ``img``, ``img_shape``. Added key: ``crop_box`` (see the module docstring).

    Args: as ``RandomResizedCrop``; the SCL recipe is ``scale=448, crop_ratio_range=(0.25, 1.0),
    aspect_ratio_range=(1.0, 1.0)`` after a square resize to 672.
    """

    def transform(self, results: dict) -> dict:
        img = results['img']
        if 'ori_shape' not in results:
            raise KeyError(
                'RandomResizedCropWithBox needs `ori_shape` in the results (set by '
                'the image loader) to express the crop in original-image pixels'
            )
        offset_h, offset_w, target_h, target_w = self.rand_crop_params(img)
        cropped = mmcv.imcrop(
            img,
            bboxes=np.array([offset_w, offset_h, offset_w + target_w - 1, offset_h + target_h - 1]),
        )
        results['img'] = mmcv.imresize(
            cropped, tuple(self.scale[::-1]), interpolation=self.interpolation, backend=self.backend
        )
        results['img_shape'] = results['img'].shape
        ori_h, ori_w = results['ori_shape'][:2]
        # Earlier transforms only resized the whole image: scale the box back to ori_shape.
        sy, sx = ori_h / img.shape[0], ori_w / img.shape[1]
        results['crop_box'] = np.array(
            [offset_w * sx, offset_h * sy, (offset_w + target_w) * sx, (offset_h + target_h) * sy],
            dtype=np.float32,
        )
        return results
