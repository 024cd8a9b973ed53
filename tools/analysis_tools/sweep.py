"""Loss-weight sensitivity: train a config over a grid of two config keys and several seeds.

    python tools/analysis_tools/sweep.py configs/demo/3d.py \\
        --x model.distill_losses.pd.loss_weight 1 10 100 \\
        --y model.distill_losses.ndd.loss_weight 1 10 \\
        --seeds 0 1 --work-dir work_dirs/sweep_3d \\
        --cfg-options model.teacher_ckpt=work_dirs/demo/seed0/teacher/epoch_12.pth

Every cell (x value, y value, seed) is one ordinary training run of the config with the two keys
set (as ``--cfg-options`` would set them; list entries by index, ``model.losses.0.loss_weight``)
and the seed (``randomness.seed``, or the key the config's ``seed_key`` names:
:func:`mlkd.engine.runs.set_run_seed`); cells run one after the other, and a value given twice
is refused. Its validation metrics are written atomically to ``<work-dir>/results/<cell>.json``
with a fingerprint of the cell's config when it ends, so an interrupted sweep started again with
the same arguments skips the finished cells; a finished cell of another config is refused
(``--overwrite`` trains it again), as are the tables of another sweep in the work dir. The sweep
selects weights, so it reports the validation split only (never test). Outputs, refreshed after
every cell: ``sweep.md`` (mean ± std per cell, the same table as the heatmap), ``sweep.csv`` (one
row per run) and ``sweep.png`` (heatmap of the mean, std annotated).

With a teacher cache configured (``--cfg-options model.teacher_cache.dir=DIR``) the teacher runs
once per seed instead of once per cell: the first cell of a seed writes ``DIR/seed<S>``
(``mode='write'``), every later cell of that seed trains from it (``mode='read'``),
bit-identically to the live teacher (docs/teacher_cache.md). A grid key that changes the
teacher's outputs or the taps the losses read makes the read refuse the cache, naming the field.
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import os.path as osp
import re
import statistics
import sys
import time

ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from mmengine.config import DictAction  # noqa: E402

import mlkd  # noqa: E402,F401
from mlkd.engine.hooks.progress import format_seconds  # noqa: E402
from mlkd.engine.runs import (  # noqa: E402
    METRICS,
    load_finished_run,
    save_finished_run,  # noqa: E402
    seed_key_of,
    seed_written_key,
    set_run_seed,
    train_and_evaluate,
    write_json_atomic,
)
from mlkd.teacher_cache import written_epochs  # noqa: E402
from mlkd.utils.cli import load_config  # noqa: E402
from mlkd.utils.config_fingerprint import flatten_config  # noqa: E402
from mlkd.utils.output_policy import (  # noqa: E402
    add_overwrite_argument,
    check_outputs,  # noqa: E402
    open_output,
    save_figure,
    write_text,
)


def parse_value(text: str):
    """``'10'`` -> 10, ``'0.5'`` -> 0.5, ``'True'`` -> True; anything else stays a string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def use_teacher_cache(cfg, seed: int) -> str | None:
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


def resolve_key(cfg, key: str):
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


def summary_grid(
    results: dict[str, dict], x_values: list, y_values: list, seeds: list[int], metric: str
) -> tuple[list[list[float]], list[list[float]], list[list[int]]]:
    """Mean, std (0 for one seed) and count of ``metric`` per (y, x) cell; NaN when no run."""
    means, stds, counts = [], [], []
    for y in y_values:
        row_m, row_s, row_n = [], [], []
        for x in x_values:
            values = [
                results[cell_name(x, y, s)]['val'][metric]
                for s in seeds
                if cell_name(x, y, s) in results
            ]
            row_m.append(statistics.mean(values) if values else float('nan'))
            row_s.append(statistics.stdev(values) if len(values) > 1 else 0.0)
            row_n.append(len(values))
        means.append(row_m)
        stds.append(row_s)
        counts.append(row_n)
    return means, stds, counts


def write_table(
    path: str, grid, x_key: str, y_key: str, x_values, y_values, metric: str, title: str, **policy
) -> None:
    means, stds, counts = grid
    lines = [
        f'# {title}',
        '',
        f'Validation {metric} (mean ± std over seeds, n = runs); rows `{y_key}`, '
        f'columns `{x_key}`.',
        '',
        '| ' + ' | '.join([f'{y_key} \\ {x_key}'] + [str(x) for x in x_values]) + ' |',
        '|' + '---|' * (len(x_values) + 1),
    ]
    for y, row_m, row_s, row_n in zip(y_values, means, stds, counts):
        cells = [f'{m:.2f} ± {s:.2f} (n={n})' if n else '—' for m, s, n in zip(row_m, row_s, row_n)]
        lines.append('| ' + ' | '.join([str(y)] + cells) + ' |')
    write_text(path, '\n'.join(lines) + '\n', **policy)


def write_csv(path: str, results: dict[str, dict], **policy) -> None:
    with open_output(path, newline='', **policy) as f:
        writer = csv.writer(f)
        writer.writerow(['x_key', 'x', 'y_key', 'y', 'seed', *METRICS, 'seconds'])
        for result in results.values():
            writer.writerow(
                [
                    result['x_key'],
                    result['x'],
                    result['y_key'],
                    result['y'],
                    result['seed'],
                    *(result['val'][m] for m in METRICS),
                    f'{result["seconds"]:.1f}',
                ]
            )


def write_heatmap(
    path: str, grid, x_key: str, y_key: str, x_values, y_values, metric: str, title: str, **policy
) -> None:
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import numpy as np

    means, stds, counts = (np.asarray(a, dtype=float) for a in grid)
    fig, ax = plt.subplots(figsize=(1.6 + 1.3 * len(x_values), 1.4 + 0.9 * len(y_values)))
    image = ax.imshow(np.ma.masked_invalid(means), cmap='viridis', origin='lower', aspect='auto')
    fig.colorbar(image, ax=ax, label=f'val {metric}')
    finite = means[np.isfinite(means)]
    middle = (finite.min() + finite.max()) / 2 if finite.size else 0.0
    for i in range(len(y_values)):
        for j in range(len(x_values)):
            if counts[i, j]:
                colour = 'white' if means[i, j] < middle else 'black'
                ax.text(
                    j,
                    i,
                    f'{means[i, j]:.1f}\n± {stds[i, j]:.1f}',
                    ha='center',
                    va='center',
                    color=colour,
                    fontsize=9,
                )
    ax.set_xticks(range(len(x_values)), [str(v) for v in x_values])
    ax.set_yticks(range(len(y_values)), [str(v) for v in y_values])
    ax.set_xlabel(x_key)
    ax.set_ylabel(y_key)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    save_figure(fig, path, dpi=120, **policy)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('config')
    parser.add_argument(
        '--x',
        nargs='+',
        required=True,
        metavar=('KEY', 'VALUE'),
        help='config key of the columns, then its values',
    )
    parser.add_argument(
        '--y',
        nargs='+',
        required=True,
        metavar=('KEY', 'VALUE'),
        help='config key of the rows, then its values',
    )
    parser.add_argument('--seeds', type=int, nargs='+', default=[0])
    parser.add_argument('--work-dir', required=True)
    parser.add_argument('--metric', default='mAP', choices=list(METRICS))
    parser.add_argument(
        '--cfg-options',
        nargs='+',
        action=DictAction,
        default={},
        help='other config overrides applied to every cell',
    )
    parser.add_argument('--verbose', action='store_true', help='show the training logs')
    add_overwrite_argument(
        parser,
        help='replace what an earlier sweep of another config or grid '
        'left in the work dir (its tables, and cells it finished with another '
        'config, which are trained again)',
    )
    args = parser.parse_args(argv)
    for name in ('x', 'y'):
        if len(getattr(args, name)) < 2:
            parser.error(f'--{name} needs a config key and at least one value')
    x_key, x_values = args.x[0], [parse_value(v) for v in args.x[1:]]
    y_key, y_values = args.y[0], [parse_value(v) for v in args.y[1:]]
    if x_key == y_key:
        parser.error(f'--x and --y set the same key {x_key!r}')
    for flag, values in (('--x', x_values), ('--y', y_values), ('--seeds', args.seeds)):
        if duplicates(values):
            parser.error(
                f'{flag} gives {duplicates(values)[0]!r} more than once (values '
                f'{values}); each grid point would be trained twice'
            )

    base = load_config(args.config, args.cfg_options)  # --cfg-options keys checked
    try:
        seed_key, overwritten = seed_key_of(base), seed_written_key(base)
    except KeyError as bad:
        parser.error(bad.args[0])
    for flag, key in (('--x', x_key), ('--y', y_key)):
        if (
            key == overwritten
            or overwritten.startswith(key + '.')
            or key.startswith(overwritten + '.')
        ):
            parser.error(
                f'{flag} sets {key!r}, which the run seed overwrites ({args.config}: '
                f'seed_key {seed_key!r}); every cell would be the same run. Give the '
                'seeds with --seeds'
            )
    for key in (x_key, y_key):
        try:
            resolve_key(base, key)
        except KeyError as missing:
            parser.error(
                f'{key!r} is not a key of {args.config} (after --cfg-options): '
                f'{missing.args[0]!r} does not exist'
            )

    # The tables describe one sweep: refuse those of another config or grid unless --overwrite.
    manifest = dict(
        config=flatten_config(base),
        x_key=x_key,
        x_values=repr(x_values),
        y_key=y_key,
        y_values=repr(y_values),
        seeds=args.seeds,
        metric=args.metric,
    )
    manifest_path = osp.join(args.work_dir, 'sweep.json')
    tables = [osp.join(args.work_dir, f'sweep.{extension}') for extension in ('md', 'csv', 'png')]
    same_sweep = (
        osp.isfile(manifest_path) and json.load(open(manifest_path, encoding='utf-8')) == manifest
    )
    if not same_sweep:
        check_outputs([manifest_path, *tables], inputs=[args.config], overwrite=args.overwrite)
    write_json_atomic(manifest_path, manifest)

    results_dir = osp.join(args.work_dir, 'results')
    cells = [(x, y, s) for s in args.seeds for y in y_values for x in x_values]
    configs, done = {}, {}
    for x, y, seed in cells:  # a finished cell of another config is refused, never reused
        name = cell_name(x, y, seed)
        cfg = base.copy()
        cfg.merge_from_dict({x_key: x, y_key: y})
        cfg.work_dir = osp.join(args.work_dir, 'runs', name)
        set_run_seed(cfg, seed)
        configs[name] = cfg
        result = load_finished_run(
            osp.join(results_dir, f'{name}.json'),
            flatten_config(cfg),
            what=f'sweep cell {name}',
            overwrite=args.overwrite,
        )
        if result is not None:
            done[name] = result
    todo = [c for c in cells if cell_name(*c) not in done]
    print(
        f'sweep: {len(cells)} runs ({len(x_values)} × {len(y_values)} × '
        f'{len(args.seeds)} seeds), {len(cells) - len(todo)} already finished',
        flush=True,
    )
    title = f'{osp.basename(args.config)}: {args.metric} on val'
    started = time.perf_counter()
    for index, (x, y, seed) in enumerate(todo):
        name = cell_name(x, y, seed)
        cfg = configs[name]
        # The cell's identity is its config without the cache mode (read or write gives the
        # same run), so a finished cell is recognised whichever mode made it.
        fingerprint = flatten_config(cfg)
        cache_mode = use_teacher_cache(cfg, seed)
        if index:
            elapsed = time.perf_counter() - started
            eta = format_seconds(elapsed / index * (len(todo) - index))
        else:
            eta = '?'
        label = f'[{index + 1}/{len(todo)}, ETA {eta}] {name}'
        if cache_mode is not None:
            label += f' (teacher cache: {cache_mode})'
        result = train_and_evaluate(cfg, label, verbose=args.verbose, overwrite=args.overwrite)
        result.update(x_key=x_key, x=x, y_key=y_key, y=y, seed=seed, config=args.config)
        save_finished_run(osp.join(results_dir, f'{name}.json'), result, fingerprint)
        print(f'{name}: ' + '  '.join(f'{k} {v:.2f}' for k, v in result['val'].items()), flush=True)
        done[name] = result
        _write_outputs(args, done, x_key, y_key, x_values, y_values, title)
    _write_outputs(args, done, x_key, y_key, x_values, y_values, title)
    print(open(osp.join(args.work_dir, 'sweep.md'), encoding='utf-8').read())


def _write_outputs(args, done, x_key, y_key, x_values, y_values, title) -> None:
    wanted = {cell_name(x, y, s) for s in args.seeds for y in y_values for x in x_values}
    results = {k: v for k, v in done.items() if k in wanted}
    grid = summary_grid(results, x_values, y_values, args.seeds, args.metric)
    # This sweep's own tables (checked at the start), refreshed after every cell.
    policy = dict(inputs=[args.config], overwrite=True)
    write_table(
        osp.join(args.work_dir, 'sweep.md'),
        grid,
        x_key,
        y_key,
        x_values,
        y_values,
        args.metric,
        title,
        **policy,
    )
    write_csv(osp.join(args.work_dir, 'sweep.csv'), results, **policy)
    write_heatmap(
        osp.join(args.work_dir, 'sweep.png'),
        grid,
        x_key,
        y_key,
        x_values,
        y_values,
        args.metric,
        title,
        **policy,
    )


if __name__ == '__main__':
    main()
