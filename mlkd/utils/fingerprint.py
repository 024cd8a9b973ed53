"""Which config made a result: :func:`fingerprint`, the one digest of a resolved config.

A config is flattened to ``key path -> repr(value)`` (:func:`flatten_config`) and the sorted pairs
are hashed. Every place where results of different configs could be taken for each other uses it:

* a training work dir's record (:mod:`mlkd.utils.work_dir`): another config never trains over a
  run;
* the sweep's finished cells (:func:`mlkd.apis.runs.load_finished_run`) and a benchmark's
  protocol (:mod:`mlkd.apis.benchmark`): a result is reused only for the config that made it;
* the results collector (:mod:`mlkd.apis.results`): runs are averaged as seeds only when their
  configs differ in nothing but the seed;
* the config part of a teacher cache's manifest (``dataset_sha256`` in
  :mod:`mlkd.teacher_cache`).

Standard library only, and nothing from mlkd: any layer may import it.
"""

from __future__ import annotations

import hashlib
import json
import os
import os.path as osp
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    'LOCATION_KEYS',
    'config_differences',
    'config_leaves',
    'fingerprint',
    'flatten_config',
    'values_fingerprint',
]

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


def _relocated(value: str, places: list[tuple[str, str]]) -> str:
    """``value`` with a leading folder of ``places`` replaced by its placeholder."""
    for folder, placeholder in places:
        if value == folder or value.startswith(folder + os.sep):
            return placeholder + value[len(folder) :]
    return value


def _spellings(places: Mapping[str, str]) -> list[tuple[str, str]]:
    """(folder as written, placeholder) for every folder of ``places``, absolute and as given,
    the deepest first (a work dir inside the repository is matched before the repository)."""
    pairs = []
    for folder, placeholder in places.items():
        pairs.append((osp.abspath(folder), placeholder))
        if folder not in ('', '.') and folder != osp.abspath(folder):
            pairs.append((folder.rstrip(os.sep), placeholder))
    return sorted(pairs, key=lambda pair: len(osp.abspath(pair[0])), reverse=True)


def flatten_config(
    cfg: Mapping | Any,
    ignore: Iterable[str] = LOCATION_KEYS,
    places: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """:func:`config_leaves` with every value as its ``repr`` (comparable, JSON-serialisable).

    Args:
        cfg: a Config or a (nested) dict.
        ignore: dotted keys left out, with everything below them.
        places: ``{folder: placeholder}``: a string value that is a path in ``folder`` (absolute,
            or as written) is written with the placeholder instead, so that the result does not
            depend on where the repository or a work dir is (``{'/home/me/mlkd': '<repo>'}``
            turns ``'/home/me/mlkd/configs/x.py'`` into ``'<repo>/configs/x.py'``).
    """
    spellings = _spellings(places or {})
    flat = {}
    for key, value in config_leaves(cfg, ignore).items():
        if spellings and isinstance(value, str):
            value = _relocated(value, spellings)
        flat[key] = repr(value)
    return flat


def fingerprint(
    cfg: Mapping | Any,
    ignore: Iterable[str] = LOCATION_KEYS,
    places: Mapping[str, str] | None = None,
) -> str:
    """SHA-256 (hex) of ``cfg`` flattened by :func:`flatten_config` (same arguments): equal for
    two configs exactly when every leaf outside ``ignore`` has the same ``repr``.

    The digest is that of the sorted ``(key, repr)`` pairs as ASCII JSON, the format the work-dir
    records and the sweep's results were written with since they exist: those stay valid.
    """
    return values_fingerprint(flatten_config(cfg, ignore, places))


def values_fingerprint(values: Mapping[str, str]) -> str:
    """:func:`fingerprint` of a config flattened already (:func:`flatten_config`'s result), for a
    caller that keeps the values too (to name what differs)."""
    text = json.dumps(sorted(values.items()), ensure_ascii=True)
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def config_differences(a: Mapping[str, str], b: Mapping[str, str], limit: int = 5) -> str:
    """The first ``limit`` keys where two flattened configs differ, as ``key: a -> b``."""
    keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    shown = [f'{k}: {a.get(k, "(absent)")} -> {b.get(k, "(absent)")}' for k in keys[:limit]]
    more = f' (and {len(keys) - limit} more)' if len(keys) > limit else ''
    return '; '.join(shown) + more
