"""Loss-weight sensitivity: train a config over a grid of two config keys and several seeds.

Every cell (x value, y value, seed) is one ordinary training run of the config with the two keys
set (as ``--cfg-options`` would set them; list entries by index, ``model.losses.0.loss_weight``)
and the seed (``randomness.seed``, or the key the config's ``seed_key`` names:
:func:`mlkd.apis.runs.set_run_seed`); cells run one after the other, and a value given twice
is refused. Its validation metrics are written atomically to ``<work-dir>/results/<cell>.json``
with the :func:`~mlkd.utils.fingerprint.fingerprint` of the cell's config when it ends, so an
interrupted sweep started again with the same arguments skips the finished cells; a finished cell
of another config is refused (``overwrite`` trains it again), as are the tables of another sweep
in the work dir. The sweep selects weights, so it reports the validation split only (never test).
Outputs, refreshed after every cell: ``sweep.md`` (mean ± std per cell, the same table as the
heatmap), ``sweep.csv`` (one row per run) and ``sweep.png`` (heatmap of the mean, std annotated).

With a teacher cache configured (``model.teacher_cache.dir=DIR``) the teacher runs once per seed
instead of once per cell: the first cell of a seed writes ``DIR/seed<S>`` (``mode='write'``),
every later cell of that seed trains from it (``mode='read'``), bit-identically to the live
teacher (docs/teacher_cache.md). A grid key that changes the teacher's outputs or the taps the
losses read makes the read refuse the cache, naming the field.

``tools/analysis_tools/sweep.py`` is its command line.
"""

from __future__ import annotations

import json
import os.path as osp
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mmengine.config import Config

from mlkd.apis.runs import (
    METRICS,
    load_finished_run,
    save_finished_run,
    seed_key_of,
    seed_written_keys,
    set_run_seed,
    train_and_evaluate,
)
from mlkd.teacher_cache import written_epochs
from mlkd.utils.atomic import write_json_atomic
from mlkd.utils.cli import load_config
from mlkd.utils.fingerprint import flatten_config
from mlkd.utils.output_policy import check_outputs, save_figure, write_text
from mlkd.utils.tables import format_seconds, mean_std, render_table, write_csv

__all__ = ['SweepRequestError', 'cell_name', 'resolve_key', 'run_sweep', 'use_teacher_cache']


class SweepRequestError(ValueError):
    """A sweep that cannot run as asked (its grid or keys); nothing was trained."""


def use_teacher_cache(cfg: Config, seed: int) -> str | None:
    """Point a cell's ``model.teacher_cache`` at the seed's cache: ``'read'`` when it holds every
    epoch of the run, else ``'write'``; ``None`` (nothing changed) without a configured cache."""
    cache = cfg.get('model', {}).get('teacher_cache') or {}
    if cache.get('dir') is None:
        return None
    folder = osp.join(cache['dir'], f'seed{seed}')
    epochs = cfg.train_cfg.max_epochs
    mode = 'read' if set(range(epochs)) <= set(written_epochs(folder)) else 'write'
    # A new model dict: Config.copy() is shallow, and the sweep's base config must keep its dir.
    cfg.model = dict(cfg.model, teacher_cache=dict(cache, dir=folder, mode=mode))
    return mode


def cell_name(x_value, y_value, seed: int) -> str:
    """File-system-safe cell identifier, e.g. ``x=100_y=10_seed=0``."""
    safe = [re.sub(r'[^A-Za-z0-9.+-]', '-', str(v)) for v in (x_value, y_value)]
    return f'x={safe[0]}_y={safe[1]}_seed={seed}'


def resolve_key(cfg: Config | Mapping, key: str) -> Any:
    """The value of the dotted ``key`` in ``cfg``; list entries by index (``losses.0.weight``).

    Raises:
        KeyError: naming the first part of ``key`` that does not exist.
    """
    node = cfg
    for depth, part in enumerate(key.split('.')):
        missing = KeyError('.'.join(key.split('.')[: depth + 1]))
        if isinstance(node, (list, tuple)):
            if not (part.isdigit() and int(part) < len(node)):
                raise missing
            node = node[int(part)]
        else:
            try:
                node = node[part]
            except (KeyError, TypeError, AttributeError):
                raise missing from None
    return node


def duplicates(values: list) -> list:
    """Values given more than once (``1`` and ``1.0`` are the same grid point)."""
    return [v for i, v in enumerate(values) if v in values[:i]]


@dataclass(frozen=True)
class SweepGrid:
    """What the sweep's table and heatmap show: ``metric`` per cell of ``x_key`` × ``y_key``.

    Attributes:
        means, stds, counts: ``[len(y_values)][len(x_values)]``: the mean over the cell's seeds
            (NaN without runs), the sample std (0 for one run) and the number of runs.
    """

    x_key: str
    y_key: str
    x_values: list
    y_values: list
    metric: str
    title: str
    means: list[list[float]]
    stds: list[list[float]]
    counts: list[list[int]]


def summary_grid(
    results: dict[str, dict],
    x: tuple[str, list],
    y: tuple[str, list],
    seeds: list[int],
    metric: str,
    title: str,
) -> SweepGrid:
    """Mean, std and count of the validation ``metric`` per (y, x) cell of ``results``."""
    (x_key, x_values), (y_key, y_values) = x, y
    means, stds, counts = [], [], []
    for y_value in y_values:
        row_m, row_s, row_n = [], [], []
        for x_value in x_values:
            values = [
                results[cell_name(x_value, y_value, s)]['val'][metric]
                for s in seeds
                if cell_name(x_value, y_value, s) in results
            ]
            mean, std = mean_std(values)
            row_m.append(mean)
            row_s.append(0.0 if std is None else std)
            row_n.append(len(values))
        means.append(row_m)
        stds.append(row_s)
        counts.append(row_n)
    return SweepGrid(x_key, y_key, x_values, y_values, metric, title, means, stds, counts)


def _cell(mean: float, std: float, count: int) -> str:
    if not count:
        return '—'
    spread = f' ± {std:.2f}' if count > 1 else ''
    return f'{mean:.2f}{spread} (n={count})'


def write_table(path: str, grid: SweepGrid, **policy) -> None:
    """``sweep.md``: ``grid`` as a Markdown table, rows ``y_key``, columns ``x_key``, each cell
    ``mean ± std (n=runs)`` (``mean (n=1)`` for one run: it has no spread; ``—`` without runs),
    under the output policy (``policy``: ``inputs``, ``overwrite``)."""
    rows = [
        [y] + [_cell(m, s, n) for m, s, n in zip(*cells)]
        for y, *cells in zip(grid.y_values, grid.means, grid.stds, grid.counts)
    ]
    header = [f'{grid.y_key} \\ {grid.x_key}', *map(str, grid.x_values)]
    text = (
        f'# {grid.title}\n\nValidation {grid.metric} (mean ± std over seeds, n = runs); rows '
        f'`{grid.y_key}`, columns `{grid.x_key}`.\n\n{render_table(header, rows)}\n'
    )
    write_text(path, text, **policy)


def write_results_csv(path: str, results: dict[str, dict], **policy) -> None:
    """``sweep.csv``: one row per finished run (its keys, values, seed, the validation
    :data:`~mlkd.apis.runs.METRICS` and its seconds), under the output policy."""
    header = ['x_key', 'x', 'y_key', 'y', 'seed', *METRICS, 'seconds']
    rows = [
        [r['x_key'], r['x'], r['y_key'], r['y'], r['seed'], *(r['val'][m] for m in METRICS)]
        + [f'{r["seconds"]:.1f}']
        for r in results.values()
    ]
    write_csv(path, header, rows, **policy)


def write_heatmap(path: str, grid: SweepGrid, **policy) -> None:
    """``sweep.png``: the means of ``grid`` as a heatmap, each cell annotated with mean ± std,
    under the output policy (``policy``: ``inputs``, ``overwrite``)."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import numpy as np

    x_values, y_values = grid.x_values, grid.y_values
    means, stds, counts = (np.asarray(a, dtype=float) for a in (grid.means, grid.stds, grid.counts))
    fig, ax = plt.subplots(figsize=(1.6 + 1.3 * len(x_values), 1.4 + 0.9 * len(y_values)))
    image = ax.imshow(np.ma.masked_invalid(means), cmap='viridis', origin='lower', aspect='auto')
    fig.colorbar(image, ax=ax, label=f'val {grid.metric}')
    finite = means[np.isfinite(means)]
    middle = (finite.min() + finite.max()) / 2 if finite.size else 0.0
    for i in range(len(y_values)):
        for j in range(len(x_values)):
            if counts[i, j]:
                colour = 'white' if means[i, j] < middle else 'black'
                ax.text(
                    j,
                    i,
                    f'{means[i, j]:.1f}' + (f'\n± {stds[i, j]:.1f}' if counts[i, j] > 1 else ''),
                    ha='center',
                    va='center',
                    color=colour,
                    fontsize=9,
                )
    ax.set_xticks(range(len(x_values)), [str(v) for v in x_values])
    ax.set_yticks(range(len(y_values)), [str(v) for v in y_values])
    ax.set_xlabel(grid.x_key)
    ax.set_ylabel(grid.y_key)
    ax.set_title(grid.title, fontsize=10)
    save_figure(fig, path, dpi=120, tight_layout=True, **policy)


def check_grid(
    base: Config,
    config: str,
    x: tuple[str, list],
    y: tuple[str, list],
    seeds: Sequence[int],
) -> None:
    """Refuse a grid that would train a run twice or set what is not there.

    Raises:
        SweepRequestError: two axes on one key, a value given twice, an axis the run seed
            overwrites, or a key missing from ``base`` (the config after ``--cfg-options``).
    """
    (x_key, x_values), (y_key, y_values) = x, y
    if x_key == y_key:
        raise SweepRequestError(f'--x and --y set the same key {x_key!r}')
    for flag, values in (('--x', x_values), ('--y', y_values), ('--seeds', list(seeds))):
        if duplicates(values):
            raise SweepRequestError(
                f'{flag} gives {duplicates(values)[0]!r} more than once (values '
                f'{values}); each grid point would be trained twice'
            )
    for flag, values, axis in (('--x', x_values, 0), ('--y', y_values, 1)):
        # Cells are folders named by the values made file-system safe: two values that read the
        # same there would share one folder (one result for both).
        names = [
            cell_name(*((v, y_values[0]) if axis == 0 else (x_values[0], v)), 0) for v in values
        ]
        if duplicates(names):
            clash = [v for v, n in zip(values, names) if n == duplicates(names)[0]]
            raise SweepRequestError(
                f'{flag} values {clash} name the same cell folder ({duplicates(names)[0]}): '
                'give values that differ in letters, digits, ".", "+" or "-"'
            )
    try:
        seed_key, written = seed_key_of(base), seed_written_keys(base)
    except KeyError as bad:
        raise SweepRequestError(bad.args[0]) from None
    for flag, key in (('--x', x_key), ('--y', y_key)):
        if any(
            key == overwritten
            or overwritten.startswith(key + '.')
            or key.startswith(overwritten + '.')
            for overwritten in written
        ):
            raise SweepRequestError(
                f'{flag} sets {key!r}, which the run seed overwrites ({config}: '
                f'seed_key {base.get("seed_key", seed_key)!r}); every cell would be the same run. Give the '
                'seeds with --seeds'
            )
    for key in (x_key, y_key):
        try:
            resolve_key(base, key)
        except KeyError as missing:
            raise SweepRequestError(
                f'{key!r} is not a key of {config} (after --cfg-options): '
                f'{missing.args[0]!r} does not exist'
            ) from None


def run_sweep(
    config: str,
    x: tuple[str, list],
    y: tuple[str, list],
    work_dir: str,
    *,
    seeds: Sequence[int] = (0,),
    metric: str = 'mAP',
    options: dict | None = None,
    verbose: bool = False,
    overwrite: bool = False,
    log: Callable[[str], None] = lambda line: print(line, flush=True),
) -> dict[str, dict]:
    """Train ``config`` over the grid ``x`` × ``y`` (``(key, values)`` each) × ``seeds`` in
    ``work_dir`` (module doc) and write its tables.

    Args:
        metric: the validation metric of the tables (one of :data:`~mlkd.apis.runs.METRICS`,
            what each run reports).
        options: ``--cfg-options`` applied to every cell.
        verbose: show the training logs.
        overwrite: replace what an earlier sweep of another config or grid left in the work dir
            (its tables, and cells it finished with another config, which are trained again).

    Returns:
        each cell's result by :func:`cell_name`.

    Raises:
        SweepRequestError: see :func:`check_grid`, or a ``metric`` the runs do not report
            (nothing trained).
        StaleResultError: a finished cell of another config, without ``overwrite``.
        OutputExistsError: the tables of another sweep, without ``overwrite``.
    """
    (x_key, x_values), (y_key, y_values) = x, y
    seeds = list(seeds)
    if metric not in METRICS:
        raise SweepRequestError(
            f'metric {metric!r} is not one the runs report ({", ".join(METRICS)}): the tables '
            'could not be written after training'
        )
    base = load_config(config, options)  # --cfg-options keys checked
    check_grid(base, config, x, y, seeds)

    # The tables describe one sweep: refuse those of another config or grid unless overwrite.
    manifest = dict(
        config=flatten_config(base),
        x_key=x_key,
        x_values=repr(x_values),
        y_key=y_key,
        y_values=repr(y_values),
        seeds=seeds,
        metric=metric,
    )
    manifest_path = osp.join(work_dir, 'sweep.json')
    tables = [osp.join(work_dir, f'sweep.{extension}') for extension in ('md', 'csv', 'png')]
    same_sweep = False
    if osp.isfile(manifest_path):
        with open(manifest_path, encoding='utf-8') as f:
            same_sweep = json.load(f) == manifest
    if not same_sweep:
        check_outputs([manifest_path, *tables], inputs=[config], overwrite=overwrite)
    write_json_atomic(manifest_path, manifest)

    results_dir = osp.join(work_dir, 'results')
    cells = [(xv, yv, s) for s in seeds for yv in y_values for xv in x_values]
    configs, done = {}, {}
    for xv, yv, seed in cells:  # a finished cell of another config is refused, never reused
        name = cell_name(xv, yv, seed)
        cfg = base.copy()
        cfg.merge_from_dict({x_key: xv, y_key: yv})
        cfg.work_dir = osp.join(work_dir, 'runs', name)
        set_run_seed(cfg, seed)
        configs[name] = cfg
        result = load_finished_run(
            osp.join(results_dir, f'{name}.json'),
            cfg,
            what=f'sweep cell {name}',
            overwrite=overwrite,
        )
        if result is not None:
            done[name] = result
    todo = [c for c in cells if cell_name(*c) not in done]
    log(
        f'sweep: {len(cells)} runs ({len(x_values)} × {len(y_values)} × '
        f'{len(seeds)} seeds), {len(cells) - len(todo)} already finished'
    )
    title = f'{osp.basename(config)}: {metric} on val'
    outputs = dict(
        work_dir=work_dir, config=config, x=x, y=y, seeds=seeds, metric=metric, title=title
    )
    started = time.perf_counter()
    for index, (xv, yv, seed) in enumerate(todo):
        name = cell_name(xv, yv, seed)
        # The cell's identity is its config without the teacher cache's folder and mode (read
        # or write gives the same run), so a finished cell is recognised whichever mode made it.
        identity = configs[name]
        cfg = identity.copy()
        cache_mode = use_teacher_cache(cfg, seed)
        if index:
            elapsed = time.perf_counter() - started
            eta = format_seconds(elapsed / index * (len(todo) - index))
        else:
            eta = '?'
        label = f'[{index + 1}/{len(todo)}, ETA {eta}] {name}'
        if cache_mode is not None:
            label += f' (teacher cache: {cache_mode})'
        result = train_and_evaluate(cfg, label, verbose=verbose, overwrite=overwrite)
        result.update(x_key=x_key, x=xv, y_key=y_key, y=yv, seed=seed, config=config)
        save_finished_run(osp.join(results_dir, f'{name}.json'), result, identity)
        log(f'{name}: ' + '  '.join(f'{k} {v:.2f}' for k, v in result['val'].items()))
        done[name] = result
        write_sweep_outputs(done, **outputs)
    write_sweep_outputs(done, **outputs)
    with open(osp.join(work_dir, 'sweep.md'), encoding='utf-8') as f:
        log(f.read())
    return done


def write_sweep_outputs(
    done: dict[str, dict],
    *,
    work_dir: str,
    config: str,
    x: tuple[str, list],
    y: tuple[str, list],
    seeds: list[int],
    metric: str,
    title: str,
) -> None:
    """Refresh ``sweep.md``, ``sweep.csv`` and ``sweep.png`` with the finished cells of the grid
    (this sweep's own tables, checked at its start)."""
    wanted = {cell_name(xv, yv, s) for s in seeds for yv in y[1] for xv in x[1]}
    results = {k: v for k, v in done.items() if k in wanted}
    grid = summary_grid(results, x, y, seeds, metric, title)
    policy = dict(inputs=[config], overwrite=True)
    write_table(osp.join(work_dir, 'sweep.md'), grid, **policy)
    write_results_csv(osp.join(work_dir, 'sweep.csv'), results, **policy)
    write_heatmap(osp.join(work_dir, 'sweep.png'), grid, **policy)
