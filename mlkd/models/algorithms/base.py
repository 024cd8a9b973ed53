"""What every mlkd algorithm shares: taps on its networks, the shape probe, connectors and losses.

An algorithm owns one or more classifiers, each with a name prefix (``''`` for the single network
of :class:`ClassifierWithLosses`; ``'s_'`` / ``'t_'`` for a distiller's student and teacher). A
training step makes a dictionary of named tensors:

* ``<prefix><tap>`` for every tap of every network: ``logits`` (head output), ``feats`` (backbone
  output), ``pooled`` (neck output) — each only where the network has that module — plus the taps
  given in the config as module paths (``dict(stage3='backbone.layer3')``);
* ``gt``: ``[B, C]`` target built once by the data preprocessor (1 positive, 0 negative,
  -1 ignored); ``gt_full``: the clean ``[B, C]`` labels where the dataset has them (single-positive
  data), else ``gt``; ``sample_idx``: ``[B]`` dataset indices; ``crop_box`` / ``flip``: the
  random crop of each sample in its full image (:func:`crop_geometry`); ``data_samples``;
* the output of every connector, under the connector's name.

:class:`~.routing.ConnectorRouter` and :class:`~.routing.LossRouter` consume it. Only the taps that
some connector or loss reads are recorded during training.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from mmengine.model import BaseModel
from torch import nn

from mlkd.models.utils import batch_targets

from .loss_guard import LossGuard
from .routing import ConnectorRouter, LossRouter
from .taps import Taps, resolve_module

#: Taps every classifier has without configuration where the module exists (mmpretrain layout).
DEFAULT_TAPS = {'logits': 'head', 'feats': 'backbone', 'pooled': 'neck'}
#: Names an algorithm supplies besides the taps and connector outputs.
BATCH_NAMES = ('gt', 'gt_full', 'sample_idx', 'crop_box', 'flip', 'data_samples')
#: The task loss of the trained network logs under this key (its other keys get ``_cls``).
TASK_LOSS_KEY = 'loss_cls'


def task_loss_keys(task: Mapping[str, torch.Tensor], weight: float) -> dict[str, torch.Tensor]:
    """Rename a classifier's loss dict for the log (``loss`` -> ``loss_cls``) and weight it."""
    out = {}
    for key, value in task.items():
        if 'loss' not in key:
            out[key] = value
        else:
            out[TASK_LOSS_KEY if key == 'loss' else f'{key}_cls'] = value * weight
    return out


def tap_paths(net: nn.Module, extra: Mapping[str, str] | None, owner: str) -> dict[str, str]:
    """The default taps that exist in ``net`` plus ``extra`` (which must all exist)."""
    paths = {}
    for name, path in DEFAULT_TAPS.items():
        try:
            resolve_module(net, path, owner)
        except KeyError:
            continue
        paths[name] = path
    for name, path in (extra or {}).items():
        resolve_module(net, path.rsplit('@', 1)[0] if '@' in path else path, owner)
        paths[name] = path
    return paths


@torch.no_grad()
def probe_network(
    net: nn.Module, paths: Mapping[str, str], owner: str, prefix: str, input_size: Sequence[int]
) -> dict[str, Any]:
    """The taps ``paths`` of ``net`` (named ``<prefix><tap>``) on one zero batch of two images of
    ``input_size`` ``(H, W)``, in eval mode under ``no_grad`` (the network's mode restored)."""
    was_training = net.training
    net.eval()
    with Taps(net, dict(paths), owner, prefix) as taps:
        net(torch.zeros(2, 3, *input_size), mode='tensor')
    net.train(was_training)
    return taps.values()


def build_routers(
    supplied: set[str],
    connectors: Mapping[str, dict] | None,
    losses: Mapping[str, dict] | None,
    probe: Callable[[], dict[str, Any]],
    facts: Mapping[str, Any],
    network_taps: Mapping[str, Sequence[str]],
    reserved: Sequence[str] = (TASK_LOSS_KEY,),
    loss_prefix: str = 'loss_',
    owner: str = '',
) -> tuple[ConnectorRouter, LossRouter]:
    """The connectors and losses of one set of named tensors (see the module doc).

    Args:
        supplied: every name the algorithm supplies before the connectors run.
        connectors: connector name -> config (:class:`ConnectorRouter`).
        losses: loss name -> config (:class:`LossRouter`).
        probe: returns the supplied tensors of one eval-mode forward on a zero batch (called only
            when a module asks for sizes; the caller caches it).
        facts: constructor facts injected into losses that accept them (``num_classes``...);
            the probed ``shapes`` / ``channels`` (by full name) and, per prefix ``p`` of
            ``network_taps``, ``<p>shapes`` / ``<p>channels`` (by tap name) are added when a loss
            asks.
        network_taps: network name prefix (``'s_'``) -> the names of its taps.
        reserved: log keys already taken (the task loss's).
        loss_prefix: log-key prefix of the losses' results.
        owner: config key that holds ``connectors`` and ``losses`` (``'teachers.a.'``), for
            error messages.
    """
    connector_router = ConnectorRouter(connectors, supplied, probe, owner=f'{owner}connectors')
    supplied = set(supplied) | set(connector_router)

    def all_facts(wanted: list[str]) -> dict[str, Any]:
        if set(wanted) <= set(facts):  # no size wanted: no probe
            return dict(facts)
        values = connector_router._probe_values(probe)
        shapes = {k: _shape(v) for k, v in values.items()}
        out = dict(facts, shapes=shapes, channels={k: _channels(s) for k, s in shapes.items()})
        for prefix, taps in network_taps.items():
            own = {
                k[len(prefix) :]: s
                for k, s in shapes.items()
                if k.startswith(prefix) and k[len(prefix) :] in taps
            }
            out[f'{prefix}shapes'] = own
            out[f'{prefix}channels'] = {k: _channels(s) for k, s in own.items()}
        return out

    loss_router = LossRouter(
        losses,
        supplied,
        all_facts,
        prefix=loss_prefix,
        reserved=reserved,
        owner=f'{owner}distill_losses' if owner else 'losses',
    )
    return connector_router, loss_router


class RoutedAlgorithm(BaseModel):
    """Base of mlkd's algorithms: networks with taps, connectors and named losses.

    Subclasses build their networks, then call :meth:`build_routing`; in ``loss()`` they run the
    networks inside :meth:`record` and hand the recorded tensors to :meth:`route`.

    Args:
        data_preprocessor: defaults to :class:`MultiLabelDataPreprocessor` (targets built once).
        probe_input_size: ``(H, W)`` of the probe input (match the training crop; the shipped
            configs take it from the dataset config's ``input_size``).
        loss_guard: settings of the :class:`~.loss_guard.LossGuard` that :meth:`parse_losses`
            applies to every training step (``dict(divergence_factor=1e4, reference_iters=10)``
            in the shipped configs): a NaN / inf term, or a total above ``divergence_factor``
            times its starting level, stops the run before the step, naming the terms
            (``divergence_factor=None`` keeps the NaN / inf check only). ``None``: the losses are
            left to the optimizer wrapper (:class:`~mlkd.engine.optimizers.GuardedOptimWrapper`
            checks their total).
    """

    #: Attribute (and state-dict prefix) of the losses: ``distill_losses`` in a distiller.
    losses_attr = 'losses'

    def __init__(
        self,
        data_preprocessor: dict | None = None,
        probe_input_size: Sequence[int] = (224, 224),
        init_cfg: dict | None = None,
        loss_guard: Mapping | None = None,
    ) -> None:
        if data_preprocessor is None:
            data_preprocessor = dict(type='MultiLabelDataPreprocessor')
        elif isinstance(data_preprocessor, dict):
            data_preprocessor.setdefault('type', 'MultiLabelDataPreprocessor')
        super().__init__(data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        self.probe_input_size = tuple(int(s) for s in probe_input_size)
        if len(self.probe_input_size) != 2:
            raise ValueError(f'probe_input_size must be (H, W), got {probe_input_size!r}')
        #: Checks the losses of every training step (``None``: off); see :meth:`parse_losses`.
        self.loss_guard = LossGuard.from_config(loss_guard, 'model.loss_guard')

    # ----------------------------------------------------------------- construction
    def networks(self) -> dict[str, tuple[nn.Module, str]]:
        """``prefix -> (network, owner name)`` of the tapped networks (subclasses override)."""
        raise NotImplementedError

    def build_routing(
        self,
        tap_specs: Mapping[str, Mapping[str, str]],
        losses: Mapping[str, dict] | None,
        connectors: Mapping[str, dict] | None,
        facts: Mapping[str, Any],
        reserved: Sequence[str] = (TASK_LOSS_KEY,),
        extra_names: Sequence[str] = (),
        view_prefixes: Sequence[str] = (),
    ) -> None:
        """Resolve taps, build connectors and losses, and keep the taps they read.

        Args:
            tap_specs: ``prefix -> {tap name: module path}`` (the default taps are added).
            losses: loss name -> config (see :class:`LossRouter`).
            connectors: connector name -> config (see :class:`ConnectorRouter`).
            facts: constructor facts injected into losses that accept them (``num_classes``...);
                the probed ``shapes`` / ``channels`` (by full name) and, per prefix ``p``,
                ``<p>shapes`` / ``<p>channels`` (by tap name) are added when a loss asks.
            reserved: log keys of the task loss.
            extra_names: further names the subclass supplies in its training step.
            view_prefixes: prefixes of further views of the batch that the subclass runs through
                the networks (``'positive_'``): every tap ``<p><t>`` is then also supplied as
                ``<view prefix><p><t>``, recorded by :meth:`record` with that view prefix.
        """
        nets = self.networks()
        self._tap_paths = {
            prefix: tap_paths(nets[prefix][0], tap_specs.get(prefix), nets[prefix][1])
            for prefix in nets
        }
        self._view_prefixes = tuple(view_prefixes)
        tap_names = {f'{p}{t}' for p, paths in self._tap_paths.items() for t in paths}
        supplied = (
            set(BATCH_NAMES)
            | set(extra_names)
            | tap_names
            | {f'{view}{name}' for view in self._view_prefixes for name in tap_names}
        )
        self._probe_cache: dict[str, Any] | None = None
        self.connectors, losses_router = build_routers(
            supplied,
            connectors,
            losses,
            self._probe,
            facts,
            {prefix: list(paths) for prefix, paths in self._tap_paths.items() if prefix},
            reserved=reserved,
        )
        setattr(self, self.losses_attr, losses_router)
        self._probe_cache = None  # one-off; do not keep tensors alive
        consumed = self.consumed_names() - set(self.connectors)
        self._recorded = {
            ('', prefix): {
                'logits': paths['logits'],
                **{t: paths[t] for t in paths if f'{prefix}{t}' in consumed},
            }
            for prefix, paths in self._tap_paths.items()
        }
        self._recorded.update(
            {
                (view, prefix): {t: paths[t] for t in paths if f'{view}{prefix}{t}' in consumed}
                for view in self._view_prefixes
                for prefix, paths in self._tap_paths.items()
            }
        )

    @torch.no_grad()
    def _probe(self) -> dict[str, Any]:
        """Every tap of every network on one zero batch, in eval mode (modes restored)."""
        if self._probe_cache is None:
            values = {}
            for prefix, (net, owner) in self.networks().items():
                values.update(
                    probe_network(
                        net, self._tap_paths[prefix], owner, prefix, self.probe_input_size
                    )
                )
            # Further views go through the same network: their tensors have the same sizes.
            values.update(
                {
                    f'{view}{name}': value
                    for view in self._view_prefixes
                    for name, value in list(values.items())
                }
            )
            self._probe_cache = values
        return self._probe_cache

    @property
    def loss_router(self) -> LossRouter:
        return getattr(self, self.losses_attr)

    def consumed_names(self) -> set[str]:
        """Every named tensor some connector or loss reads (what a training step must supply)."""
        return self.loss_router.consumed | self.connectors.consumed

    # ----------------------------------------------------------------- training step
    def record(self, prefix: str, view: str = '') -> Taps:
        """Context manager recording the taps of network ``prefix`` that somebody consumes (for
        the further view with prefix ``view``, under ``<view><prefix><tap>``)."""
        net, owner = self.networks()[prefix]
        return Taps(net, self._recorded[(view, prefix)], owner, f'{view}{prefix}')

    def batch_names(
        self, data_samples: Sequence, num_classes: int, device: torch.device
    ) -> dict[str, Any]:
        """``gt``, ``gt_full``, ``sample_idx`` and ``data_samples`` of a batch (built if read)."""
        consumed = self.consumed_names()
        names: dict[str, Any] = {'data_samples': data_samples}
        if consumed & {'gt', 'gt_full'}:
            names['gt'] = batch_targets(data_samples, num_classes).to(device)
        if 'gt_full' in consumed:
            full = [s.get('gt_full') for s in data_samples]
            names['gt_full'] = (
                names['gt'] if any(f is None for f in full) else torch.stack(full).to(device)
            )
        if 'sample_idx' in consumed:
            names['sample_idx'] = sample_indices(data_samples, device)
        if consumed & {'crop_box', 'flip'}:
            names['crop_box'], names['flip'] = crop_geometry(data_samples, device)
        return names

    def parse_losses(
        self, losses: dict[str, torch.Tensor]
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """mmengine's total and log variables of a step's losses, checked by :attr:`loss_guard`
        before anything is back-propagated: a NaN / inf or exploding loss raises
        :class:`~.loss_guard.NonFiniteTrainingError` / :class:`~.loss_guard.DivergedTrainingError`
        naming the terms, the epoch and the iteration."""
        loss, log_vars = super().parse_losses(losses)
        if self.loss_guard is not None:
            self.loss_guard(loss, log_vars)
        return loss, log_vars

    def route(
        self, available: dict[str, Any], task: dict[str, torch.Tensor]
    ) -> dict[str, torch.Tensor]:
        """Run connectors (in the current precision) then losses (fp32); merge with ``task``."""
        self.connectors(available)
        losses = dict(task)
        for key, value in self.loss_router(available).items():
            if key in losses:  # build time refuses known clashes; a dict term could still clash
                raise RuntimeError(f'two losses log under {key!r}')
            losses[key] = value
        return losses


def sample_indices(data_samples: Sequence, device: torch.device) -> torch.Tensor:
    """The `[B]` dataset indices (`sample_idx`) of a batch's data samples."""
    indices = [s.get('sample_idx') for s in data_samples]
    if any(i is None for i in indices):
        raise KeyError(
            'a loss or the teacher cache reads `sample_idx`, but the data samples carry none: keep '
            "'sample_idx' in PackInputs(meta_keys=...) (mmpretrain's default)"
        )
    return torch.as_tensor(indices, dtype=torch.long, device=device)


def crop_geometry(
    data_samples: Sequence, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """``crop_box`` ``[B, 4]`` (normalised by ``ori_shape``) and ``flip`` ``[B]`` (bool) of a batch.

    ``crop_box`` is ``(x1, y1, x2, y2)`` in [0, 1] of the original image, from the ``crop_box``
    meta field (original-image pixels, :class:`~mlkd.datasets.transforms.RandomResizedCropWithBox`)
    divided by ``ori_shape``; a sample without one is the whole image ``(0, 0, 1, 1)``. ``flip`` is
    the ``flip`` meta field (horizontal flip after the crop), ``False`` when absent.
    """
    boxes, flips = [], []
    for sample in data_samples:
        box = sample.get('crop_box')
        if box is None:
            boxes.append([0.0, 0.0, 1.0, 1.0])
        else:
            ori = sample.get('ori_shape')
            if ori is None:
                raise KeyError(
                    'a data sample has `crop_box` but no `ori_shape` to normalise it; '
                    "keep 'ori_shape' in PackInputs(meta_keys=...)"
                )
            height, width = float(ori[0]), float(ori[1])
            x1, y1, x2, y2 = (float(v) for v in box)
            boxes.append([x1 / width, y1 / height, x2 / width, y2 / height])
        direction = sample.get('flip_direction')
        flipped = bool(sample.get('flip', False))
        if flipped and direction not in (None, 'horizontal'):
            raise ValueError(f'crop geometry supports horizontal flips only, got {direction!r}')
        flips.append(flipped)
    return (
        torch.tensor(boxes, dtype=torch.float32, device=device),
        torch.tensor(flips, dtype=torch.bool, device=device),
    )


def _shape(value: Any):
    if isinstance(value, torch.Tensor):
        return tuple(value.shape)
    if isinstance(value, (tuple, list)):
        return type(value)(_shape(v) for v in value)
    return None


def _channels(shape):
    if shape and isinstance(shape[0], tuple):
        return [s[1] for s in shape]
    return shape[1] if shape and len(shape) > 1 else None
