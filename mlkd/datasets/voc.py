"""Pascal VOC multi-label classification with an explicit policy for ``difficult`` objects.

mmpretrain 1.2.0's ``VOC`` reads every ``<object>`` of ``Annotations/{id}.xml`` and puts its class
into ``gt_label`` when ``<difficult>0</difficult>`` and into ``gt_label_difficult`` otherwise (both
unsorted lists built from sets; objects whose name is not a known class are skipped). A class with
a normal and a difficult object is therefore in both lists, and an image whose only objects of a
class are difficult has no positive for it. Its VOC metrics then turn the *difficult-only* classes
(``gt_label_difficult - gt_label``) into -1 (ignored) by default.

Training losses only see ``gt_label`` (``ClsDataPreprocessor`` one-hot encodes it), so the
paper-specific choice must be made in the dataset. :class:`VOCMultiLabel` exposes it as
``difficult_policy`` (methods.md section 7, architecture.md section 6.1):

=========== ======================================= ==============================================
policy      ``gt_label``                            ``gt_label_difficult``
=========== ======================================= ==============================================
ignore      classes with a non-difficult object     difficult-only classes (metrics give them -1)
positive    classes with any object (L2D)           ``[]``
negative    classes with a non-difficult object     ``[]`` (difficult-only classes are negatives)
=========== ======================================= ==============================================

Both lists are sorted. ``drop_all_difficult=True`` leaves out the images without a non-difficult
object (every object difficult), whatever the policy: Cole et al.'s ``preproc/format_pascal.py``
(single-positive code) lists an image only through a ``1`` in the per-class image sets, which
difficult objects never get. The default keeps every image of the image set. Note that with ``ignore`` a *training* loss still sees difficult-only
classes as negatives (only metrics read ``gt_label_difficult``); evaluation pipelines must pass the
key through ``PackInputs(meta_keys=DIFFICULT_META_KEYS)`` for the metric to see it.
"""

from __future__ import annotations

import os.path as osp
from typing import Any

from mmengine.logging import MMLogger
from mmpretrain.datasets import VOC
from mmpretrain.datasets.transforms import PackInputs

from mlkd.registry import DATASETS

from .holdout import HoldOutMixin
from .observed_labels import ObservedLabelsMixin
from .utils import check_config_choice, require_data_root
from .validation import DataListChecksMixin

__all__ = ['VOCMultiLabel', 'DIFFICULT_META_KEYS']

#: ``PackInputs`` meta keys that carry ``gt_label_difficult`` to the metrics: mmpretrain's default
#: keys and ``gt_label_difficult``.
DIFFICULT_META_KEYS = (*PackInputs.DEFAULT_META_KEYS, 'gt_label_difficult')

_POLICIES = ('ignore', 'positive', 'negative')


@DATASETS.register_module()
class VOCMultiLabel(HoldOutMixin, ObservedLabelsMixin, DataListChecksMixin, VOC):
    """mmpretrain's ``VOC`` plus ``difficult_policy`` (see the module docstring for the table).

    Each data_info holds ``img_path`` (``data_root/JPEGImages/{id}.jpg``), ``gt_label`` and
    ``gt_label_difficult`` (sorted lists of class indices into ``VOC2007_CATEGORIES``; both
    ``None`` when annotations are not loaded, i.e. a test split without ``ann_path``).

    Args:
        data_root: VOC year folder, e.g. ``data/VOCdevkit/VOC2007``; must exist.
        split: ``'train'``, ``'val'``, ``'trainval'`` or ``'test'``; the image ids come from
            ``ImageSets/Main/{split}.txt``.
        difficult_policy: ``'ignore'`` (default, mmpretrain / VOC-devkit convention),
            ``'positive'`` (L2D: difficult objects count as positives) or ``'negative'``.
        unknown_objects: what to do with an ``<object>`` whose ``<name>`` is not one of the
            classes (mmpretrain skips it silently): ``'error'`` (default; names the XML file,
            the object and the closest class, e.g. one that differs only by case) or
            ``'skip'`` (dropped, their count logged), e.g. for a class subset in ``metainfo``.
        duplicate_images: ``'error'`` (default) or ``'skip'`` (logged) for an image id listed
            twice in the image set (:mod:`mlkd.datasets.validation`).
        drop_all_difficult: leave out images whose objects are all difficult (no non-difficult
            object), as Cole et al.'s formatter does; default ``False`` keeps them. Needs the
            annotations (not a test split without ``ann_path``).
        **kwargs: the other arguments of :class:`mmpretrain.datasets.VOC` (``image_set_path``,
            ``data_prefix``, ``test_mode``, ``metainfo``, ``pipeline``, ...).
    """

    def __init__(
        self,
        data_root: str,
        split: str = 'trainval',
        difficult_policy: str = 'ignore',
        unknown_objects: str = 'error',
        drop_all_difficult: bool = False,
        **kwargs: Any,
    ) -> None:
        if unknown_objects not in ('error', 'skip'):
            raise ValueError(
                f"VOCMultiLabel: unknown_objects must be 'error' or 'skip', got "
                f'{unknown_objects!r} (config key `unknown_objects`)'
            )
        self.unknown_objects, self.skipped_objects = unknown_objects, 0
        check_config_choice('VOCMultiLabel', 'difficult_policy', difficult_policy, _POLICIES)
        data_root = require_data_root(
            'VOCMultiLabel',
            data_root,
            'the VOC year folder holding JPEGImages/, '
            'Annotations/ and ImageSets/Main/ (e.g. data/VOCdevkit/VOC2007)',
        )
        self.difficult_policy = difficult_policy
        self.drop_all_difficult = bool(drop_all_difficult)
        super().__init__(data_root=data_root, split=split, **kwargs)

    def data_source(self) -> str:
        return str(self.image_set_path)

    def _check_object_names(self, xml_path: str) -> None:
        """Refuse (or count, under ``unknown_objects='skip'``) objects of unknown classes."""
        import xml.etree.ElementTree as ET

        root = ET.fromstring(self.backend.get(xml_path))
        names = [(obj.findtext('name') or '').strip() for obj in root.findall('object')]
        unknown = [(i, name) for i, name in enumerate(names) if name not in self.class_to_idx]
        if not unknown:
            return
        if self.unknown_objects == 'skip':
            self.skipped_objects += len(unknown)
            return
        index, name = unknown[0]
        by_case = {c.lower(): c for c in self.CLASSES}
        hint = (
            f'it differs only by case from the class {by_case[name.lower()]!r}'
            if name.lower() in by_case
            else f'expected one of {list(self.CLASSES)}'
        )
        raise ValueError(
            f'VOCMultiLabel: {xml_path}: object {index} has the unknown class name '
            f'{name!r}; {hint}. Fix the annotation, or set unknown_objects="skip" '
            'to drop such objects (their count is logged)'
        )

    def _get_labels_from_xml(self, img_id: str) -> tuple[list[int], list[int]]:
        """mmpretrain's parser, with the XML file named in any error it raises and objects of
        unknown classes refused (``unknown_objects``)."""
        xml_path = self.backend.join_path(self.ann_prefix, f'{img_id}.xml')
        try:
            labels = super()._get_labels_from_xml(img_id)
        except FileNotFoundError:
            raise FileNotFoundError(
                f'VOCMultiLabel: annotation {xml_path!r} of image id '
                f'{img_id!r} (listed in {self.image_set_path}) not found'
            ) from None
        except Exception as err:  # ParseError, or a missing <name>/<difficult> tag
            raise ValueError(
                f'VOCMultiLabel: cannot read labels from {xml_path!r}: {type(err).__name__}: {err}'
            ) from err
        self._check_object_names(xml_path)
        return labels

    def load_data_list(self) -> list[dict]:
        """Load mmpretrain's lists, drop the all-difficult images if asked, then apply
        ``difficult_policy``.

        Returns:
            list of ``dict(img_path=str, gt_label=list[int] | None,
            gt_label_difficult=list[int] | None)`` in image-set order.
        """
        if not osp.isfile(self.image_set_path):
            raise FileNotFoundError(
                f'VOCMultiLabel: image set {self.image_set_path!r} not found '
                f'(split={self.split!r}, data_root={self.data_root!r})'
            )
        data_list = super().load_data_list()
        if self.skipped_objects:
            MMLogger.get_current_instance().warning(
                f'VOCMultiLabel: skipped {self.skipped_objects} objects of unknown classes in '
                f'the annotations of {self.image_set_path} (unknown_objects="skip")'
            )
        if self.drop_all_difficult:
            if any(info['gt_label'] is None for info in data_list):
                raise ValueError(
                    'VOCMultiLabel: drop_all_difficult=True needs the annotations, '
                    f'but split {self.split!r} was loaded without them (test_mode '
                    'without ann_path); set drop_all_difficult=False'
                )
            # mmpretrain's gt_label holds the classes with a non-difficult object.
            data_list = [info for info in data_list if info['gt_label']]
        for info in data_list:
            if info['gt_label'] is None:
                continue
            info['gt_label'], info['gt_label_difficult'] = self.apply_policy(
                info['gt_label'], info['gt_label_difficult'], self.difficult_policy
            )
        return data_list

    @staticmethod
    def apply_policy(
        labels: list[int], labels_difficult: list[int], policy: str
    ) -> tuple[list[int], list[int]]:
        """Combine mmpretrain's two label lists under ``policy``.

        Args:
            labels: classes with at least one non-difficult object.
            labels_difficult: classes with at least one difficult object (may overlap ``labels``).
            policy: ``'ignore'``, ``'positive'`` or ``'negative'``.

        Returns:
            ``(gt_label, gt_label_difficult)``, sorted lists of ints.
        """
        normal, difficult = set(labels), set(labels_difficult)
        if policy == 'positive':
            return sorted(normal | difficult), []
        if policy == 'negative':
            return sorted(normal), []
        if policy == 'ignore':
            return sorted(normal), sorted(difficult - normal)
        raise ValueError(f'unknown difficult_policy {policy!r}; choose from {_POLICIES}')

    def extra_repr(self) -> list[str]:
        return super().extra_repr() + [
            f'Difficult policy: \t{self.difficult_policy}',
            f'Drop all-difficult images: \t{self.drop_all_difficult}',
        ]
