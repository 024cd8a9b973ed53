"""What a run computes, as comparable data: a resolved config flattened to ``key path -> value``.

Used wherever results of different runs could be taken for each other: training into a work dir
that holds another config's run, the sweep and the demo reusing finished runs, the results
collector averaging runs as seeds of one setting.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

#: Keys that say where and how a run is launched or named, not what it computes.
LOCATION_KEYS = ('work_dir', 'experiment_name', 'launcher', 'resume', 'load_from', 'filename')


def config_leaves(cfg: Mapping | Any, ignore: Iterable[str] = LOCATION_KEYS) -> dict[str, Any]:
    """``{'a.b.0.c': value}`` for every leaf of ``cfg`` (a Config or dict), list entries indexed
    by position (an empty dict or list is a leaf); keys in ``ignore`` (full dotted
    paths) and below them are left out."""
    if hasattr(cfg, 'to_dict'):
        cfg = cfg.to_dict()
    ignored = tuple(ignore)
    flat: dict[str, Any] = {}

    def visit(prefix: str, value: Any) -> None:
        if prefix and any(prefix == key or prefix.startswith(key + '.') for key in ignored):
            return
        if isinstance(value, Mapping):
            if not value and prefix:
                flat[prefix] = {}
            for key, item in value.items():
                visit(f'{prefix}.{key}' if prefix else str(key), item)
        elif isinstance(value, (list, tuple)):
            if not value and prefix:
                flat[prefix] = []
            for index, item in enumerate(value):
                visit(f'{prefix}.{index}' if prefix else str(index), item)
        else:
            flat[prefix] = value

    visit('', cfg)
    return flat


def flatten_config(cfg: Mapping | Any, ignore: Iterable[str] = LOCATION_KEYS) -> dict[str, str]:
    """:func:`config_leaves` with every value as its ``repr`` (comparable, JSON-serialisable)."""
    return {key: repr(value) for key, value in config_leaves(cfg, ignore).items()}


def fingerprint(flat: Mapping[str, str]) -> str:
    """SHA-256 (hex) of a flattened config."""
    text = json.dumps(sorted(flat.items()), ensure_ascii=True)
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def config_differences(a: Mapping[str, str], b: Mapping[str, str], limit: int = 5) -> str:
    """The first ``limit`` keys where two flattened configs differ, as ``key: a -> b``."""
    keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    shown = [f'{k}: {a.get(k, "(absent)")} -> {b.get(k, "(absent)")}' for k in keys[:limit]]
    more = f' (and {len(keys) - limit} more)' if len(keys) > limit else ''
    return '; '.join(shown) + more
