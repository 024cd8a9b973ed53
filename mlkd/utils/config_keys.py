"""Misspelled config keys fail loudly, with the closest known key suggested.

mmengine copies any top-level key into the run's config and reads only the ones it knows, so
``laod_from = 'x.pth'`` or ``--cfg-options randomnes.seed=5`` is dumped beside the real config
and silently ignored. The rules:

* A ``--cfg-options`` key must exist in the loaded config (at every level but the last), or be
  a top-level key that mmengine's Runner or mlkd reads (:func:`known_top_level_keys`).
* Its last level may add a new key only where something takes it (:func:`accepted_keys`): a
  keyword of the class that the dict's ``type`` names (``optim_wrapper.dtype=float16`` for
  ``AmpOptimWrapper``, ``model.allow_random_teacher=True``), of the class mmengine builds from a
  dict without ``type`` (``train_dataloader.pin_memory`` for torch's ``DataLoader``,
  ``train_cfg.val_begin`` for ``EpochBasedTrainLoop``), or any name in a dict of named entries
  (``model.student_taps.<name>``, ``default_hooks.<name>``), also where the config leaves that
  dict unset (a keyword annotated ``dict[str, ...]``). Anything else (``model.foo=1``,
  ``train_cfg.max_epoch=3``, ``optim_wrapper.optimizer.lrr=0.1``) is refused with the closest
  known keys.
* ``+key=value`` adds a key without these checks (Hydra's convention), for a user who knows
  that something reads it.
* An option that the config overrides at run time is refused (:func:`check_overridden_options`).
* A top-level key of a config file that nobody reads and that is a near miss of a known one
  (``laod_from``) is refused. Other unknown top-level names are the configs' own variables
  (``image_size``, ``max_lr``, ``method``) and are allowed.
"""

from __future__ import annotations

import copy
import difflib
import functools
import inspect
import re
from collections.abc import Callable, Iterable
from typing import Any

#: How similar (difflib ratio) a key must be to a known one to count as its misspelling.
NEAR_MISS = 0.8

#: Top-level keys mlkd itself reads, besides mmengine's.
MLKD_TOP_LEVEL_KEYS = frozenset({'load_strict', 'vis_backends'})


class UnknownConfigKeyError(KeyError):
    """A config key that nothing reads (usually a misspelling)."""

    def __str__(self) -> str:  # KeyError would show the message quoted, escapes and all
        return str(self.args[0])


@functools.lru_cache(maxsize=1)
def known_top_level_keys() -> frozenset:
    """mmengine Runner's arguments, the keys it reads from ``cfg``, the config machinery's and
    mlkd's."""
    from mmengine.runner import Runner

    runner_args = set(inspect.signature(Runner.__init__).parameters) - {'self', 'cfg'}
    read_by_runner = {
        'model_wrapper_cfg',
        'find_unused_parameters',
        'compile',
        'sync_bn',
        'efficient_conv_bn_eval',
        'activation_checkpointing',
        'strategy',
        'runner_type',  # read by RUNNERS.build / mlkd.engine.build_runner
    }
    config_machinery = {'_base_', 'custom_imports', 'filename', 'text'}
    return frozenset(runner_args | read_by_runner | config_machinery | MLKD_TOP_LEVEL_KEYS)


def _suggest(key: str, candidates: Iterable[str], cutoff: float = 0.6) -> str:
    close = difflib.get_close_matches(key, sorted(set(map(str, candidates))), n=3, cutoff=cutoff)
    return f'; did you mean {" or ".join(close)}?' if close else ''


def _near_misses(key: str, candidates: Iterable[str]) -> list[str]:
    return [
        c
        for c in difflib.get_close_matches(
            key, sorted(set(map(str, candidates))), n=3, cutoff=NEAR_MISS
        )
        if c != key
    ]


def check_top_level_keys(cfg, source: str) -> None:
    """Refuse top-level keys of ``cfg`` that are near misses of a known key (``laod_from``).

    Raises:
        UnknownConfigKeyError: naming ``source`` (the config file), the key and the suggestion.
    """
    known = known_top_level_keys()
    for key in cfg.keys():
        if key in known:
            continue
        close = _near_misses(key, known)
        if close:
            raise UnknownConfigKeyError(
                f'{source}: unknown top-level key {key!r}, which nothing reads; did you mean '
                f'{" or ".join(close)}?'
            )


def _child(node: Any, key: str) -> tuple[bool, Any]:
    if isinstance(node, dict):
        return (key in node, node.get(key))
    if (
        isinstance(node, (list, tuple))
        and key.lstrip('-').isdigit()
        and -len(node) <= int(key) < len(node)
    ):
        return (True, node[int(key)])
    return (False, None)


#: ``accepted_keys`` for a dict whose keys are free names (taps, hooks, ...), not arguments.
ANY_KEY = None

#: A keyword annotated ``dict[str, ...]`` / ``Mapping[str, ...]`` takes a dict of named entries.
_NAME_MAP = re.compile(r'^(typing\.)?(dict|Dict|Mapping|MutableMapping)\[str,')


def _registered(type_: Any) -> list[Callable]:
    """Every registered class or function that ``type_`` (a name or a class) may denote."""
    if not isinstance(type_, str):
        return [type_] if callable(type_) else []
    from mmengine.registry import FUNCTIONS

    from mlkd import registry

    registries = [getattr(registry, name) for name in registry.__all__ if name.isupper()]
    found = []
    for reg in [*registries, FUNCTIONS]:
        try:
            obj = reg.get(type_)
        except (KeyError, ImportError):  # a scope that is not installed
            obj = None
        if obj is not None and obj not in found:
            found.append(obj)
    return found


def keywords(obj: Callable) -> frozenset | None:
    """The keyword arguments ``obj`` (a class or function) takes; ``None`` when it takes any.

    A class's ``**kwargs`` are followed up its MRO (mmengine's and mmpretrain's classes pass them
    on to ``super().__init__``) until a class without ``**kwargs``; ``object`` and
    ``torch.nn.Module`` end the chain, as they take no keyword. A function with ``**kwargs`` takes
    any.
    """
    import torch

    chain = (
        [k for k in obj.__mro__ if k not in (object, torch.nn.Module)]
        if inspect.isclass(obj)
        else [obj]
    )
    names: set[str] = set()
    for owner in chain:
        function = vars(owner).get('__init__') if inspect.isclass(obj) else owner
        if function is None:
            continue
        try:
            parameters = inspect.signature(function).parameters.values()
        except (TypeError, ValueError):  # a builtin without a signature
            return None
        names |= {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        if not any(p.kind == p.VAR_KEYWORD for p in parameters):
            return frozenset(names - {'self'})
        if not inspect.isclass(obj):
            return None
    return frozenset(names - {'self'})


@functools.lru_cache(maxsize=1)
def _typeless_defaults() -> dict[tuple, Callable[[dict], frozenset | None]]:
    """What consumes the dicts without ``type`` that mmengine's Runner builds itself."""
    import torch
    from mmengine.runner import EpochBasedTrainLoop, IterBasedTrainLoop, Runner, TestLoop, ValLoop
    from mmengine.runner.loops import BaseLoop

    loop_args = keywords(BaseLoop)  # runner, dataloader (given by the Runner)
    loader = keywords(torch.utils.data.DataLoader) | {
        'num_batch_per_epoch',
        'disable_subprocess_warning',
    }  # popped by Runner.build_dataloader
    clip = (
        keywords(torch.nn.utils.clip_grad_norm_)
        | keywords(torch.nn.utils.clip_grad_value_)
        | {'type'}
    ) - {'parameters'}
    # DefaultOptimWrapperConstructor's documented paramwise_cfg keys.
    paramwise = frozenset(
        {
            'custom_keys',
            'bias_lr_mult',
            'bias_decay_mult',
            'norm_decay_mult',
            'dwconv_decay_mult',
            'flat_decay_mult',
            'dcn_offset_lr_mult',
            'bypass_duplicate',
        }
    )
    return {
        **{
            (name,): lambda node: loader
            for name in ('train_dataloader', 'val_dataloader', 'test_dataloader')
        },
        ('train_cfg',): lambda node: (
            (
                keywords(EpochBasedTrainLoop if node.get('by_epoch', True) else IterBasedTrainLoop)
                - loop_args
            )
            | {'by_epoch'}
        ),
        ('val_cfg',): lambda node: keywords(ValLoop) - loop_args - {'evaluator'},
        ('test_cfg',): lambda node: keywords(TestLoop) - loop_args - {'evaluator'},
        ('optim_wrapper',): lambda node: _with_type(node, 'OptimWrapper'),
        ('optim_wrapper', 'clip_grad'): lambda node: clip,
        ('optim_wrapper', 'paramwise_cfg'): lambda node: paramwise,
        ('log_processor',): lambda node: _with_type(node, 'LogProcessor'),
        ('randomness',): lambda node: keywords(Runner.set_randomness),
        ('env_cfg',): lambda node: frozenset(
            {'cudnn_benchmark', 'mp_cfg', 'dist_cfg', 'resource_limit'}
        ),
        ('env_cfg', 'mp_cfg'): lambda node: frozenset({'mp_start_method', 'opencv_num_threads'}),
        ('auto_scale_lr',): lambda node: frozenset({'enable', 'base_batch_size'}),
        # dicts of named entries, or passed on whole to torch
        ('default_hooks',): lambda node: ANY_KEY,
        ('env_cfg', 'dist_cfg'): lambda node: ANY_KEY,  # init_process_group's keywords
        ('optim_wrapper', 'paramwise_cfg', 'custom_keys'): lambda node: ANY_KEY,
        ('compile',): lambda node: ANY_KEY,
    }


def _with_type(node: dict, default_type: str) -> frozenset | None:
    """The keywords of ``node``'s ``type``, or of ``default_type`` when it has none."""
    found = _registered(node.get('type', default_type))
    if not found:
        return ANY_KEY  # an unknown type: building it fails, naming the type
    taken = [keywords(obj) for obj in found]
    return ANY_KEY if None in taken else frozenset({'type'}.union(*taken))


def _popped(path: tuple) -> set[str]:
    """Keys that mmengine or mlkd's routing layer pop from the dict at ``path`` before building
    it: the optimizer wrapper's constructor, a loss's and a connector's routing
    (:mod:`mlkd.models.algorithms.routing`), a weight initialiser's override, the settings of one
    teacher of a :class:`~mlkd.models.distillers.MultiTeacherDistiller`."""
    if path == ('optim_wrapper',):
        return {'constructor', 'paramwise_cfg'}
    holder = path[-2] if len(path) >= 2 else None
    if path[:2] == ('model', 'teachers') and len(path) == 3:
        from mlkd.models.distillers.multi_teacher import TEACHER_KEYS

        return set(TEACHER_KEYS)
    if holder in ('distill_losses', 'losses'):
        return {'inputs', 'gather'}
    if holder == 'connectors':
        return {'source', 'target'}
    if 'init_cfg' in path[-2:]:
        return {'override'}
    return set()


def accepted_keys(path: tuple, node: dict, parent: Any = None) -> frozenset | None:
    """The keys that something takes in the dict ``node`` at ``path`` of the config (a tuple of
    keys and list indices); ``None`` (:data:`ANY_KEY`) when any key goes (a dict of named
    entries).

    ``parent`` is the dict holding ``node``: when its class annotates the keyword as
    ``dict[str, ...]`` (e.g. ``student_taps: dict[str, str]``), ``node`` is a dict of named
    entries. A dict without ``type`` that no rule covers takes only the keys it has.
    """
    default = _typeless_defaults().get(tuple(path))
    if default is not None:
        taken = default(node)
    elif 'type' in node:
        taken = _with_type(node, node['type'])
    elif isinstance(parent, dict) and 'type' in parent and path:
        taken = ANY_KEY if _takes_named_entries(parent, path[-1]) else frozenset()
    elif len(path) >= 2 and path[-1] == 'inputs':  # a loss's inputs: checked when it is built
        taken = ANY_KEY
    else:
        taken = frozenset()
    return ANY_KEY if taken is ANY_KEY else frozenset(taken | _popped(path))


def _annotation(type_: Any, keyword: str) -> str | None:
    for obj in _registered(type_):
        for owner in obj.__mro__ if inspect.isclass(obj) else [obj]:
            function = vars(owner).get('__init__') if inspect.isclass(obj) else owner
            try:
                parameter = inspect.signature(function).parameters.get(keyword)
            except (TypeError, ValueError):
                parameter = None
            if parameter is not None and parameter.annotation is not parameter.empty:
                annotation = parameter.annotation
                return (
                    annotation
                    if isinstance(annotation, str)
                    else inspect.formatannotation(annotation)
                )
    return None


def _takes_named_entries(node: Any, keyword: str) -> bool:
    """Whether the class that ``node['type']`` names takes ``keyword`` as a dict of named entries
    (annotated ``dict[str, ...]``, e.g. ``student_taps``)."""
    if not (isinstance(node, dict) and 'type' in node):
        return False
    annotation = _annotation(node['type'], keyword)
    return bool(annotation and _NAME_MAP.match(annotation))


def check_cfg_options(cfg, options: dict, source: str = '--cfg-options') -> None:
    """Refuse ``--cfg-options`` keys that nothing takes (rules in the module doc). Keys starting
    with ``+`` are not checked.

    Raises:
        UnknownConfigKeyError: naming the option, the missing level and the closest keys.
    """
    # A new key is judged by the dict it goes into *after* every option is applied, so that
    # ``optim_wrapper.type=AmpOptimWrapper optim_wrapper.dtype=float16`` is accepted.
    merged = copy.deepcopy(cfg)
    try:
        merged.merge_from_dict({key.removeprefix('+'): value for key, value in options.items()})
    except (KeyError, TypeError, ValueError, IndexError):
        merged = cfg  # the walk below names the option at fault
    merged_root = {key: merged[key] for key in merged.keys()}
    for dotted in options:
        if dotted.startswith('+'):
            continue
        parts = dotted.split('.')
        node: Any = {key: cfg[key] for key in cfg.keys()}  # Config is no dict
        path: list = []
        for depth, part in enumerate(parts):
            exists, child = _child(node, part)
            if exists:
                path.append(int(part) if isinstance(node, (list, tuple)) else part)
                node = child
                continue
            where = '.'.join(parts[:depth]) or 'the config'
            siblings = list(node.keys()) if isinstance(node, dict) else []
            hint = f' (if something does read it, add it with +{dotted})'
            if depth == 0 and part in known_top_level_keys():
                break  # a Runner key the config leaves at its default (e.g. load_strict)
            if depth == 0:
                raise UnknownConfigKeyError(
                    f'{source} {dotted}: {part!r} is not a key of the config nor one that '
                    f'mmengine or mlkd reads'
                    + _suggest(part, [*siblings, *known_top_level_keys()])
                    + hint
                )
            if not isinstance(node, dict):
                raise UnknownConfigKeyError(
                    f'{source} {dotted}: {where} is {type(node).__name__}, which has no {part!r}'
                )
            if depth == len(parts) - 2 and _takes_named_entries(node, part):
                break  # the first entry of a dict of named entries the config leaves unset
            if depth < len(parts) - 1:
                raise UnknownConfigKeyError(
                    f'{source} {dotted}: {where} has no key {part!r}' + _suggest(part, siblings)
                )
            merged_node, merged_parent = _at(merged_root, path), _at(merged_root, path[:-1])
            taken = accepted_keys(tuple(path), merged_node, merged_parent)
            if taken is ANY_KEY or part in taken:
                break
            what = (
                f'{merged_node["type"]!r} takes no such keyword'
                if 'type' in merged_node
                else 'nothing reads such a key there'
            )
            raise UnknownConfigKeyError(
                f'{source} {dotted}: {where} has no key {part!r} and {what}'
                + _suggest(part, [*siblings, *taken], cutoff=0.5)
                + hint
            )


def _at(root: dict, path: list) -> Any:
    node: Any = root
    for key in path:
        node = _child(node, str(key))[1]
    return node


def check_overridden_options(cfg, options: dict, source: str = '--cfg-options') -> None:
    """Refuse an option whose value the config overrides at run time, so that it does nothing:
    ``optim_wrapper.optimizer.lr`` under a one-cycle scheduler (``OneCycleLR``,
    ``OneCycleLRWithMultipliers``), which sets the learning rate from its ``eta_max`` at every step.

    Raises:
        ValueError: naming the option, the scheduler and the key to set instead.
    """
    lr_options = [k for k in options if k.lstrip('+') == 'optim_wrapper.optimizer.lr']
    schedulers = cfg.get('param_scheduler') or []
    schedulers = [schedulers] if isinstance(schedulers, dict) else schedulers
    for index, scheduler in enumerate(schedulers):
        is_one_cycle = scheduler.get('type') in ('OneCycleLR', 'OneCycleLRWithMultipliers') or (
            scheduler.get('type') == 'OneCycleParamScheduler'
            and scheduler.get('param_name') == 'lr'
        )
        if lr_options and is_one_cycle:
            raise ValueError(
                f'{source} {lr_options[0]}={options[lr_options[0]]}: has no effect, '
                f'param_scheduler[{index}] ({scheduler["type"]}) sets the learning rate from its '
                f'eta_max (the peak) at every step; set param_scheduler.{index}.eta_max instead '
                f'(now {scheduler.get("eta_max")})'
            )
