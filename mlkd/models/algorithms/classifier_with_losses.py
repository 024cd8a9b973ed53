"""One classifier trained with its task loss plus any number of named losses on its tensors."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from mlkd.models.builder import build_network
from mlkd.registry import MODELS

from .base import RoutedAlgorithm, task_loss_keys


@MODELS.register_module()
class ClassifierWithLosses(RoutedAlgorithm):
    """A classifier plus named losses that read its recorded tensors (no teacher).

    For training recipes that need more than the head's task loss: auxiliary or contrastive
    terms on features (the intra-class contrastive teacher), per-sample state indexed by
    ``sample_idx`` (single-positive methods), or an mmpretrain loss plugged in beside the task
    loss. Losses receive by argument name: ``logits`` (``[B, C]``), ``feats`` / ``pooled`` (where
    the network has a backbone output / neck), any tap given in ``taps``, connector outputs,
    ``gt`` (``[B, C]``, 1 / 0 / -1), ``gt_full``, ``sample_idx`` (``[B]``), ``crop_box`` /
    ``flip`` (the random crop of each sample, :func:`~.base.crop_geometry`), ``data_samples``, and
    ``class_maps`` (``[B, C, h, w]``, the logits per position that the network pools into
    ``logits``: a head's own maps, :class:`~mlkd.models.heads.ClassMapHead` with ``neck=None``, or
    the linear head of a ``GlobalAveragePooling`` neck applied as a 1×1 convolution);
    ``inputs=dict(arg='name')`` in a loss config maps other argument names (e.g. an mmpretrain
    loss's ``cls_score`` / ``label``). Results log as ``loss_<name>``, the task loss as
    ``loss_cls``.

    **Several views per image** (``views``, e.g. the anchor and positive of the intra-class
    contrastive teacher, :class:`~mlkd.datasets.transforms.AnchorPositiveViews` +
    :class:`MultiViewClsDataPreprocessor`): ``views=dict(anchor=0, positive=1)`` names each view's
    index in the batch's list of inputs. The first-named view is the main one: the network's task
    loss and the unprefixed names (``logits``, ``pooled``...) are its; every other view runs through
    the network once more (``mode='tensor'``, in training mode) and its recorded tensors are
    supplied as ``<view>_<tap>`` (``positive_logits``, ``positive_pooled``...). Prediction and
    single-view batches use the main view.

    Args:
        classifier: model config dict, config path, or ``dict(cfg_path=..., **overrides)``.
        losses: name -> loss config (keys ``inputs`` and ``gather`` are read by the router).
        connectors: name -> connector config (``source``, optional ``target``).
        taps: extra tap name -> module path (``'path@k'`` for the k-th call of a module).
        task_loss_weight: factor on the classifier's own loss.
        probe_input_size: ``(H, W)`` of the shape probe (only run when a module needs sizes).
        views: ``None`` (one view), or ``dict(name=index)`` of a multi-view batch, main view
            first (see above).
        data_preprocessor: defaults to :class:`MultiLabelDataPreprocessor`.
        loss_guard: NaN / inf and divergence checks of every step's losses
            (:class:`~.base.RoutedAlgorithm`); ``None`` leaves them to the optimizer wrapper.
    """

    def __init__(
        self,
        classifier: dict | str,
        losses: dict[str, dict] | None = None,
        connectors: dict[str, dict] | None = None,
        taps: dict[str, str] | None = None,
        task_loss_weight: float = 1.0,
        probe_input_size: Sequence[int] = (224, 224),
        views: dict[str, int] | None = None,
        data_preprocessor: dict | None = None,
        init_cfg: dict | None = None,
        loss_guard: Mapping | None = None,
    ) -> None:
        super().__init__(data_preprocessor, probe_input_size, init_cfg, loss_guard)
        self.classifier = build_network(classifier, 'classifier')
        self.task_loss_weight = float(task_loss_weight)
        self.num_classes = getattr(getattr(self.classifier, 'head', None), 'num_classes', None)
        self.views = _check_views(views)
        extra_views = list(self.views or {})[1:]
        self.build_routing(
            {'': taps or {}},
            losses,
            connectors,
            facts={'num_classes': self.num_classes},
            extra_names=('class_maps',),
            view_prefixes=[f'{view}_' for view in extra_views],
        )
        if 'class_maps' in self.consumed_names():
            self._class_map_layer()  # fails at build time if the network has no such layer
            self._recorded[('', '')]['feats'] = self._tap_paths['']['feats']

    def _class_map_layer(self) -> nn.Linear | None:
        """The head's linear layer where maps come from a pooled neck; ``None`` for a map head.

        A head with its own ``class_maps`` (:class:`~mlkd.models.heads.ClassMapHead`) reads the
        backbone's maps, so the network must have no neck; otherwise the neck must be a
        ``GlobalAveragePooling`` (which commutes with the head's linear ``fc``).
        """
        neck = getattr(self.classifier, 'neck', None)
        head = getattr(self.classifier, 'head', None)
        if callable(getattr(head, 'class_maps', None)):
            if neck is not None:
                raise ValueError(
                    f'`class_maps`: head {type(head).__name__} makes its maps from the backbone '
                    f'output, but the classifier has neck {type(neck).__name__}; use neck=None'
                )
            return None
        fc = getattr(head, 'fc', None)
        if type(neck).__name__ != 'GlobalAveragePooling' or not isinstance(fc, nn.Linear):
            raise ValueError(
                '`class_maps` needs a head with a `class_maps` method (e.g. ClassMapHead) or a '
                'classifier whose neck is GlobalAveragePooling and whose head has a linear `fc`; '
                f'got neck {type(neck).__name__} and head {type(head).__name__}'
            )
        return fc

    def class_maps(self, feats: torch.Tensor | Sequence[torch.Tensor]) -> torch.Tensor:
        """``[B, C, h, w]`` logits per position, pooled by the network into its logits.

        From the head's own ``class_maps``, or the head's ``fc`` as a 1×1 conv on the last stage
        (average pooling and the linear layer commute, so ``class_maps.mean((2, 3)) == logits``).
        """
        fc = self._class_map_layer()
        if fc is None:
            return self.classifier.head.class_maps(feats)
        if isinstance(feats, (tuple, list)):
            feats = feats[-1]
        return F.conv2d(feats, fc.weight[:, :, None, None], fc.bias)

    def networks(self) -> dict:
        return {'': (self.classifier, 'classifier')}

    def _view(self, inputs, name: str | None = None) -> torch.Tensor:
        """The main view (or view ``name``) of a batch; a single-view batch is every view."""
        if isinstance(inputs, torch.Tensor):
            if name is not None and name != next(iter(self.views or {None: 0})):
                raise ValueError(
                    f'view {name!r} is configured (views={self.views}) but the batch '
                    'holds one view; use a multi-view pipeline (e.g. '
                    'AnchorPositiveViews) with MultiViewClsDataPreprocessor'
                )
            return inputs
        if self.views is None:
            raise TypeError(
                'the batch holds several views; set views=dict(name=index, ...) on '
                'ClassifierWithLosses'
            )
        index = self.views[name or next(iter(self.views))]
        if index >= len(inputs):
            raise ValueError(
                f'views={self.views} asks for view {index}, but the batch holds {len(inputs)} views'
            )
        return inputs[index]

    def forward(self, inputs: torch.Tensor, data_samples=None, mode: str = 'tensor'):
        if mode == 'loss':
            return self.loss(inputs, data_samples)
        if mode in ('predict', 'tensor'):
            return self.classifier(self._view(inputs), data_samples, mode=mode)
        raise RuntimeError(f'invalid mode {mode!r}; expected loss, predict or tensor')

    def loss(self, inputs: torch.Tensor, data_samples) -> dict[str, torch.Tensor]:
        views = list(self.views or {})
        with self.record('') as taps:
            task = self.classifier(
                self._view(inputs, views[0] if views else None), data_samples, mode='loss'
            )
        available = taps.values()
        for view in views[1:]:
            with self.record('', view=f'{view}_') as view_taps:
                self.classifier(self._view(inputs, view), mode='tensor')
            available.update(view_taps.values())
        available.update(
            self.batch_names(data_samples, self.num_classes, available['logits'].device)
        )
        if 'feats' in available and 'class_maps' in self.consumed_names():
            available['class_maps'] = self.class_maps(available['feats'])
        return self.route(available, task_loss_keys(task, self.task_loss_weight))


def _check_views(views: dict[str, int] | None) -> dict[str, int] | None:
    if views is None:
        return None
    if (
        not isinstance(views, dict)
        or not views
        or not all(isinstance(k, str) and isinstance(v, int) and v >= 0 for k, v in views.items())
    ):
        raise ValueError(
            f'views must be None or dict(name=index, ...) with view indices >= 0, got {views!r}'
        )
    if len(set(views.values())) != len(views):
        raise ValueError(f'views {views!r} name one view index twice')
    return dict(views)
