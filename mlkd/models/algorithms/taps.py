"""Record intermediate tensors of a network by module path, without editing the network.

``Taps(model, {'logits': 'head', 'label_emb': 'head.decoder'})`` is a context manager: it registers
forward hooks on enter and removes them on exit, so copies of the model (an EMA, ``deepcopy``)
never carry orphan hooks. Recorded tensors are cloned because later in-place operations (ReLU,
``out += identity``) would otherwise overwrite them. ``'path@k'`` selects the k-th call of a
module that runs several times per forward (0-based; default the last call). One-element tuples
(an mmpretrain backbone with one ``out_indices`` entry, a pooling neck) are unwrapped to the tensor.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


def _parse(spec: str) -> tuple[str, int | None]:
    if '@' in spec:
        path, index = spec.rsplit('@', 1)
        return path, int(index)
    return spec, None


def _clone(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (tuple, list)):
        return type(value)(_clone(v) for v in value)
    return value


def resolve_module(model: nn.Module, path: str, owner: str = 'model') -> nn.Module:
    """``model.get_submodule(path)`` with an error that lists nearby module paths."""
    try:
        return model.get_submodule(path) if path else model
    except AttributeError:
        prefix = path.rsplit('.', 1)[0] if '.' in path else ''
        names = [n for n, _ in model.named_modules() if n.startswith(prefix)][:20]
        raise KeyError(f'{owner} has no module {path!r}; some module paths: {names}') from None


class Taps:
    """Forward-hook recorder for a set of named module paths (a context manager).

    Args:
        model: the network to observe.
        spec: tap name -> module path (``''`` is the model itself), optionally ``'path@k'``.
        owner: name used in error messages (``'student'``, ``'teacher'``).
        prefix: prepended to every tap name in :meth:`values` (``'s_'`` for a student).
    """

    def __init__(
        self, model: nn.Module, spec: dict[str, str], owner: str = 'model', prefix: str = ''
    ) -> None:
        self.spec = {name: _parse(path) for name, path in spec.items()}
        self.prefix = prefix
        self.modules = {
            name: resolve_module(model, path, owner) for name, (path, _) in self.spec.items()
        }
        self.owner = owner
        self.records: dict[str, list[Any]] = {}
        self._handles: list[Any] = []

    def __enter__(self) -> Taps:
        self.records = {name: [] for name in self.spec}
        for name, module in self.modules.items():
            self._handles.append(module.register_forward_hook(self._hook(name)))
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def _hook(self, name: str):
        def record(module, args, output):
            self.records[name].append(_clone(output))

        return record

    def values(self) -> dict[str, Any]:
        """``prefix + tap name`` -> recorded output; raises if a tapped module did not run."""
        out = {}
        for name, (path, index) in self.spec.items():
            calls = self.records.get(name, [])
            if not calls:
                raise RuntimeError(
                    f'{self.owner} tap {name!r}: module {path!r} did not run in '
                    'this forward pass, so nothing was recorded'
                )
            if index is not None and index >= len(calls):
                raise RuntimeError(
                    f'{self.owner} tap {name!r}: asked for call {index} of '
                    f'{path!r}, which ran {len(calls)} time(s)'
                )
            value = calls[-1 if index is None else index]
            # mmpretrain backbones and necks return tuples; a one-element tuple is unwrapped.
            if isinstance(value, (tuple, list)) and len(value) == 1:
                value = value[0]
            out[f'{self.prefix}{name}'] = value
        return out
