"""Route the named tensors of a training step to connectors and losses.

A training step of an mlkd algorithm produces a dictionary of *named tensors*: network outputs and
taps (``s_logits``, ``t_feats``, ``label_emb``...), the batch target ``gt``, ``sample_idx`` and the
data samples. Two routers consume it, in this order:

* :class:`ConnectorRouter` runs the trainable modules that map one named tensor into another
  space (a FitNet hint, ReviewKD's fusion); each output becomes a new named tensor. Connectors run
  under the active autocast, like the networks, and train with the student.
* :class:`LossRouter` calls each named loss with the arguments its ``forward`` declares, drawn by
  name — identity by default, or remapped per loss with ``inputs=dict(arg='source')`` (a list of
  sources passes a list of tensors) — and names the results ``<prefix><name>`` (a dict result:
  ``<prefix><name>_<term>``). Losses run in fp32 (:func:`full_precision`); a loss that compares
  samples (``compares_samples = True`` on its class, or ``gather=True`` in its config) sees the
  global batch under DDP (:mod:`.global_batch`).

Both resolve every name when they are built, so a typo or a missing tap fails before training with
the list of what is available, and both know which names they consume, so an algorithm records only
the taps somebody uses.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import torch
from mmengine.dist import get_world_size
from torch import nn

from mlkd.models.losses.base import full_precision, is_stateful, needs_global_batch
from mlkd.registry import MODELS

from .global_batch import gather_batch

#: Keys of a loss or connector config read by the routers, never passed to the module.
ROUTING_KEYS = ('inputs', 'gather', 'source', 'target')


def forward_arguments(module_cls: type) -> tuple[list[str], list[str]]:
    """Names of a module's required and optional inputs: the arguments of its ``forward``
    (``*args`` / ``**kw`` skipped). An mlkd loss's ``forward`` carries its ``compute``'s
    arguments (:mod:`mlkd.models.losses.base`).
    """
    required, optional = [], []
    for name, param in list(inspect.signature(module_cls.forward).parameters.items())[1:]:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        (required if param.default is param.empty else optional).append(name)
    return required, optional


def registered_class(cfg: dict, owner: str) -> type:
    """The class a module config names (``type`` may be a registered name or a class)."""
    if 'type' not in cfg:
        raise KeyError(f'{owner}: config has no `type`: {cfg!r}')
    cls = MODELS.get(cfg['type']) if isinstance(cfg['type'], str) else cfg['type']
    if cls is None:
        raise KeyError(
            f'{owner}: type {cfg["type"]!r} is not registered in the mlkd model '
            'registry (a module outside mlkd needs `custom_imports` in the config)'
        )
    return cls


def _names(source: str | list[str]) -> list[str]:
    return list(source) if isinstance(source, (list, tuple)) else [source]


class ArgumentBinding:
    """Which named tensor feeds each ``forward`` argument of one module.

    Args:
        owner: name used in error messages, e.g. ``'distill_losses.fitnet'``.
        module_cls: the module's class; its ``forward`` signature is read once, here.
        inputs: optional remapping ``arg -> source name`` (or a list of names, passed as a list);
            unmapped arguments take the tensor of their own name.
        supplied: every name the algorithm can supply.

    Raises:
        ValueError: an ``inputs`` key that is no argument of ``forward``, a source nobody supplies,
            or a required argument without a source.
    """

    def __init__(
        self,
        owner: str,
        module_cls: type,
        inputs: Mapping[str, Any] | None,
        supplied: Iterable[str],
    ) -> None:
        supplied = set(supplied)
        required, optional = forward_arguments(module_cls)
        inputs = dict(inputs or {})
        strangers = sorted(set(inputs) - set(required) - set(optional))
        if strangers:
            raise ValueError(
                f'{owner}: inputs {strangers} are not arguments of '
                f'{module_cls.__name__}.forward {required + optional}'
            )
        self.sources: dict[str, str | list[str]] = {}
        for arg in required + optional:
            source = inputs.get(arg, arg)
            missing = [name for name in _names(source) if name not in supplied]
            if not missing:
                self.sources[arg] = list(source) if isinstance(source, (list, tuple)) else source
            elif arg in required or arg in inputs:
                raise ValueError(
                    f'{owner} ({module_cls.__name__}) needs {missing} for argument {arg!r}, which '
                    f'this algorithm cannot supply; available: {sorted(supplied)}. Record it with '
                    "a tap (e.g. student_taps=dict(stage3='backbone.layer3')) or map the argument "
                    "to an available name with inputs=dict(arg='name')."
                )

    @property
    def consumed(self) -> set[str]:
        """Every named tensor this binding reads."""
        return {name for source in self.sources.values() for name in _names(source)}

    def __call__(self, available: Mapping[str, Any]) -> dict[str, Any]:
        return {
            arg: [available[n] for n in source] if isinstance(source, list) else available[source]
            for arg, source in self.sources.items()
        }


#: Constructor arguments the routers can inject: build facts and probed sizes.
CONNECTOR_FACTS = ('in_channels', 'out_channels', 'in_shapes', 'out_shapes')
LOSS_FACTS = (
    'num_classes',
    'shapes',
    'channels',
    's_shapes',
    's_channels',
    't_shapes',
    't_channels',
    'input_channels',
    'teacher',
)


def _inject(
    module_cls: type, cfg: dict, facts: Callable[[list[str]], dict[str, Any]], names: Sequence[str]
) -> dict[str, Any]:
    """Constructor arguments in ``names`` that ``module_cls`` accepts and ``cfg`` leaves open.

    ``facts(wanted)`` (which may run the shape probe) is called only when something is wanted.
    """
    accepted = inspect.signature(module_cls.__init__).parameters
    wanted = [name for name in names if name in accepted and name not in cfg]
    if not wanted:
        return {}
    known = facts(wanted)
    return {name: known[name] for name in wanted if name in known}


def _reading_order(cfgs: Mapping[str, dict], supplied: set[str]) -> list[tuple[str, dict]]:
    """The connector configs, each after the connectors whose output it reads (its ``source`` or
    ``target``), otherwise in the config's order. A dumped config lists them alphabetically (a
    ReviewKD fusion ``s_abf`` before the ``s_pool`` it reads): the order of a mapping must not
    decide whether it builds. Configs that can never be satisfied come last, in order, for the
    build to name what they miss."""
    pending, known, order = dict(cfgs), set(supplied), []

    def ready(cfg: Any) -> bool:
        return all(
            n in known
            for key in ('source', 'target')
            if isinstance(cfg, Mapping) and cfg.get(key)
            for n in _names(cfg[key])
        )

    # Each time the first pending config that is ready: a config already in reading order keeps
    # its order (and with it the order its connectors draw their initial weights).
    while (name := next((n for n, cfg in pending.items() if ready(cfg)), None)) is not None:
        order.append((name, pending.pop(name)))
        known.add(name)
    return order + list(pending.items())


class ConnectorRouter(nn.ModuleDict):
    """Trainable connectors, each producing a new named tensor from recorded ones.

    Config: ``name -> dict(type=..., source='s_stage3', target='t_stage3', **kwargs)``. ``source``
    (a name or a list of names) is what the connector consumes; ``target`` (optional, same form)
    only tells its output size; a connector may read another's output, whatever their order in
    ``cfgs``. When the connector's constructor accepts ``in_channels`` /
    ``out_channels`` (or ``in_shapes`` / ``out_shapes``) and the config leaves them open, they are
    read from the probe (dimension 1 of each tensor; a list for a list of names). The output is
    available to losses and to later connectors under the connector's name.

    Args:
        cfgs: connector name -> config.
        supplied: names available before the connectors run.
        probe: callable returning ``name -> tensor`` recorded by one eval-mode forward of the
            networks (called only if a connector needs sizes). Each connector's output on the
            probed tensors is added to that dictionary, so later connectors and losses can be
            sized from it.
        owner: the config key of ``cfgs`` in error messages.
    """

    def __init__(
        self,
        cfgs: Mapping[str, dict] | None,
        supplied: Iterable[str],
        probe: Callable[[], dict[str, Any]],
        owner: str = 'connectors',
    ) -> None:
        super().__init__()
        supplied = set(supplied)
        self.sources: dict[str, str | list[str]] = {}
        group = owner
        for name, cfg in _reading_order(cfgs or {}, supplied):
            owner = f'{group}.{name}'
            cfg = dict(cfg)
            if name in supplied:
                raise ValueError(
                    f'{owner}: the name {name!r} is already taken by a recorded '
                    'tensor; choose another connector name'
                )
            if 'source' not in cfg:
                raise KeyError(f'{owner}: config needs `source`, the name(s) it consumes')
            source, target = cfg.pop('source'), cfg.pop('target', None)
            for key, value in (('source', source), ('target', target)):
                missing = [n for n in _names(value) if n not in supplied] if value else []
                if missing:
                    raise ValueError(
                        f'{owner}: {key} {missing} is not available; available: {sorted(supplied)}'
                    )
            cls = registered_class(cfg, owner)
            source = list(source) if isinstance(source, (list, tuple)) else source

            def facts(wanted, source=source, target=target) -> dict[str, Any]:
                shapes = {
                    k: tuple(v.shape)
                    for k, v in self._probe_values(probe).items()
                    if isinstance(v, torch.Tensor)
                }

                def describe(names, take):
                    if isinstance(names, (list, tuple)):
                        return [take(shapes[n]) for n in names]
                    return take(shapes[names])

                out = dict(
                    in_shapes=describe(source, tuple), in_channels=describe(source, lambda s: s[1])
                )
                if target is not None:
                    out.update(
                        out_shapes=describe(target, tuple),
                        out_channels=describe(target, lambda s: s[1]),
                    )
                return out

            self[name] = MODELS.build(cfg, default_args=_inject(cls, cfg, facts, CONNECTOR_FACTS))
            self.sources[name] = source
            supplied.add(name)

    @torch.no_grad()
    def _probe_values(self, probe: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """The probed tensors, with the outputs of the connectors built so far added (eval mode)."""
        values = probe()
        for name, connector in self.items():
            if name not in values:
                was_training = connector.training
                connector.eval()
                values[name] = connector(self._inputs(name, values))
                connector.train(was_training)
        return values

    def _inputs(self, name: str, available: Mapping[str, Any]) -> Any:
        source = self.sources[name]
        return [available[n] for n in source] if isinstance(source, list) else available[source]

    @property
    def consumed(self) -> set[str]:
        return {n for source in self.sources.values() for n in _names(source)}

    def forward(self, available: dict[str, Any]) -> dict[str, Any]:
        """Add each connector's output to ``available`` (in reading order: each after what it
        reads) and return it."""
        for name, connector in self.items():
            available[name] = connector(self._inputs(name, available))
        return available


class LossRouter(nn.ModuleDict):
    """Named losses, each called with the named tensors its ``forward`` asks for.

    Per-loss config keys read here (the rest builds the loss): ``inputs`` (argument remapping, see
    :class:`ArgumentBinding`) and ``gather`` (``True`` / ``False``: all-gather the loss's batch
    inputs across DDP ranks with gradient; default: the loss class's ``compares_samples``).

    A loss whose ``__init__`` accepts ``input_channels`` receives ``{argument: channels}`` of the
    tensors bound to its ``forward`` arguments (a list for a list of sources), probed like
    ``channels`` — e.g. VID's variances, one per channel of whatever ``t_feats`` is wired to.

    Args:
        cfgs: loss name -> config.
        supplied: every name the algorithm can supply (including connector outputs).
        facts: ``facts(wanted_names)`` returns constructor facts (``num_classes``, probed shapes
            and channels, the ``teacher`` network of a distiller) for losses whose ``__init__``
            accepts them; called only if one does.
        prefix: log-key prefix of this group's results (``'loss_'``); MMEngine back-propagates
            every key containing ``loss``.
        reserved: log keys already taken (the task loss's), refused at build time.
        owner: the config key of ``cfgs`` in error messages.
    """

    def __init__(
        self,
        cfgs: Mapping[str, dict] | None,
        supplied: Iterable[str],
        facts: Callable[[list[str]], dict[str, Any]],
        prefix: str = 'loss_',
        reserved: Iterable[str] = (),
        owner: str = 'losses',
    ) -> None:
        super().__init__()
        supplied = set(supplied)
        self.prefix = prefix
        self.bindings: dict[str, ArgumentBinding] = {}
        self.gathers: dict[str, bool] = {}
        taken: dict[str, str] = {key: 'the task loss' for key in reserved}
        group = owner
        for name, cfg in (cfgs or {}).items():
            owner = f'{group}.{name}'
            cfg = dict(cfg)
            inputs, gather = cfg.pop('inputs', None), cfg.pop('gather', None)
            cls = registered_class(cfg, owner)
            if gather is False and is_stateful(cls):
                raise ValueError(
                    f'{owner}: gather=False, but {cls.__name__} keeps per-sample state, which '
                    'every process must update from the whole batch (else the copies drift '
                    'apart and a checkpoint keeps one of them); drop gather'
                )
            self.bindings[name] = ArgumentBinding(owner, cls, inputs, supplied)
            self.gathers[name] = needs_global_batch(cls) if gather is None else bool(gather)
            self[name] = MODELS.build(
                cfg,
                default_args=_inject(
                    cls, cfg, _with_input_channels(facts, self.bindings[name]), LOSS_FACTS
                ),
            )
            # The log keys a loss declares: '<key>' or, for terms, '<key>_<term>' each.
            base_key = f'{prefix}{name}'
            terms = tuple(getattr(self[name], 'terms', ()))
            for key in [f'{base_key}_{t}' for t in terms] or [base_key]:
                if key in taken:
                    raise ValueError(
                        f'{owner} would log under {key!r}, which collides with '
                        f'{taken[key]}; rename the loss'
                    )
                taken[key] = f'loss {name!r}'

    @property
    def consumed(self) -> set[str]:
        return {n for binding in self.bindings.values() for n in binding.consumed}

    def forward(self, available: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        """``{log key: loss}`` of every loss, computed in fp32."""
        batch_size = _batch_size(available)
        distributed = get_world_size() > 1
        losses: dict[str, torch.Tensor] = {}
        with full_precision():
            for name, loss in self.items():
                args = self.bindings[name](available)
                loss.inputs_gathered = distributed and self.gathers[name]
                if loss.inputs_gathered:
                    args = {k: gather_batch(v, batch_size) for k, v in args.items()}
                value = loss(**args)
                items = value.items() if isinstance(value, dict) else [(None, value)]
                for term, term_value in items:
                    key = f'{self.prefix}{name}' + (f'_{term}' if term is not None else '')
                    if key in losses:
                        raise RuntimeError(f'losses.{name}: two results under {key!r}')
                    losses[key] = term_value
        return losses


def _with_input_channels(
    facts: Callable[[list[str]], dict[str, Any]], binding: ArgumentBinding
) -> Callable[[list[str]], dict[str, Any]]:
    """``facts`` plus ``input_channels``: the probed channels of each argument's source(s)."""

    def wrapped(wanted: list[str]) -> dict[str, Any]:
        if 'input_channels' not in wanted:
            return facts(wanted)
        known = facts([w for w in wanted if w != 'input_channels'] + ['channels'])
        channels = known['channels']
        known['input_channels'] = {
            arg: [channels.get(n) for n in source]
            if isinstance(source, list)
            else channels.get(source)
            for arg, source in binding.sources.items()
        }
        return known

    return wrapped


def _batch_size(available: Mapping[str, Any]) -> int | None:
    samples = available.get('data_samples')
    return len(samples) if samples is not None else None
