"""What the intra-class study and its RKD weight search (:mod:`mlkd.apis.intra_class`) write:
a Markdown table, a CSV of every run, the JSON of every run's result and a chart.

A paired row's values below are ``(mean difference, interval low, interval high)`` (top-1 points).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Sequence

from mlkd.utils.output_policy import open_output, save_figure
from mlkd.utils.tables import format_mean_std, mean_std, render_table, write_csv

__all__ = [
    'FIDELITY_COLUMNS',
    'SPLITS',
    'write_fidelity_outputs',
    'write_search_outputs',
    'write_study_outputs',
]

#: The splits a study may report, in table order, with their colour in the charts.
SPLIT_COLORS = {'val': 'tab:gray', 'test': 'tab:red'}
SPLITS = tuple(SPLIT_COLORS)
#: The single-label fidelity keys a study reports (``DistillFidelity``): their column, the column
#: of their paired difference from the student alone, and their decimals in its table.
FIDELITY_COLUMNS = {
    'fidelity/top1_agreement': ('top-1 agreement (%)', 'agreement − student alone', 2),
    'fidelity/kl': ('KL (nats)', 'KL − student alone', 3),
}
#: The search's term keys in plotting order (:data:`mlkd.apis.intra_class.TERM_KEYS`).
TERM_COLORS = {
    'loss_cls': 'tab:blue',
    'loss_kd': 'tab:green',
    'loss_rkd_distance': 'tab:orange',
    'loss_rkd_angle': 'tab:red',
}


def _pyplot():
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    return plt


def _interval(values: tuple[float, float, float], digits: int = 2) -> str:
    mean, low, high = (f'{value:+.{digits}f}' for value in values)
    return f'{mean} [{low}, {high}]'


def _seeds(seeds: Sequence[int]) -> str:
    return ', '.join(map(str, seeds))


def _splits(arms: list[dict]) -> list[str]:
    """The splits the study evaluated (``val`` and ``test``, or ``val`` alone for a val-only
    call); the last is the one shown per seed and in the chart."""
    return [split for split in SPLITS if split in arms[0]]


def render_study(arms: list[dict], pairs: list[dict], seeds: Sequence[int]) -> str:
    """The study's Markdown: the arms (mean ± std over seeds per split, the last split per seed),
    then the paired differences per split."""
    splits = _splits(arms)
    shown = splits[-1]
    first = render_table(
        ['arm', *(f'{split} top-1 (%)' for split in splits), f'{shown}, per seed'],
        [
            [
                a['arm'],
                *(format_mean_std(a[split]) for split in splits),
                ', '.join(f'{v:.1f}' for v in a[shown]),
            ]
            for a in arms
        ],
    )
    second = render_table(
        ['paired difference (same seed)', *(f'{split}: mean [95 % CI]' for split in splits)],
        [[p['comparison'], *(_interval(p[split]) for split in splits)] for p in pairs],
    )
    return (
        f'{first}\n\nMean ± sample std over seeds {_seeds(seeds)}.\n\n'
        f'{second}\n\nDifferences in top-1 points; 95 % Student-t interval with '
        f'{len(seeds) - 1} degrees of freedom.\n'
    )


def plot_study(arms: list[dict], pairs: list[dict], path: str, **policy) -> None:
    """Top-1 of every arm on the last split (bars: mean, dots: seeds) beside the paired
    differences on each split."""
    plt = _pyplot()
    splits = _splits(arms)
    shown = splits[-1]
    figure, (left, right) = plt.subplots(1, 2, figsize=(14, 4.8), layout='constrained')
    for i, arm in enumerate(arms):
        values = arm[shown]
        color = 'tab:orange' if 'intra' in arm['arm'] else 'tab:blue'
        left.bar(i, mean_std(values)[0], color=color, alpha=0.5)
        left.plot([i] * len(values), values, 'k.', markersize=6)
    left.set_xticks(range(len(arms)), [textwrap.fill(a['arm'], 14) for a in arms], fontsize=7)
    low = min(min(a[shown]) for a in arms)
    left.set_ylim(max(0.0, low - 3), 100)
    left.set_ylabel(f'{shown} top-1 (%)')
    left.set_title('every arm: mean (bar) and seeds (dots)', fontsize=9)
    for i, pair in enumerate(pairs):
        for j, split in enumerate(splits):
            offset = 0.2 * j - 0.1 * (len(splits) - 1)
            _error_bar(
                right, i + offset, pair[split], SPLIT_COLORS[split], split if i == 0 else None
            )
    right.axhline(0, color='k', linewidth=0.8)
    right.set_xticks(
        range(len(pairs)), [textwrap.fill(p['comparison'], 16) for p in pairs], fontsize=7
    )
    right.set_ylabel('paired difference (top-1 points)')
    right.set_title('paired differences, 95 % t-interval', fontsize=9)
    right.legend(fontsize=8)
    save_figure(figure, path, dpi=120, **policy)


def _error_bar(ax, x: float, paired: tuple, color: str, label: str | None = None) -> None:
    mean, low, high = paired
    ax.errorbar(
        x, mean, yerr=[[mean - low], [high - mean]], fmt='o', color=color, capsize=4, label=label
    )


def write_study_outputs(
    outputs: dict[str, str],
    results: dict,
    arms: list[dict],
    pairs: list[dict],
    seeds: Sequence[int],
    *,
    overwrite: bool,
    log: Callable[[str], None],
) -> None:
    """Write the study's ``outputs`` (``md``, ``csv``, ``png``, ``json`` paths, checked before it
    trained) from ``results[str(seed)][run]`` (``val``, ``test`` unless val-only,
    ``cpu_seconds``, ...)."""
    splits = _splits(arms)
    text = render_study(arms, pairs, seeds)
    with open_output(outputs['md'], overwrite=overwrite) as file:
        file.write(text)
    lines = []
    for seed in seeds:
        for run in (arm['run'] for arm in arms):
            result = results[str(seed)][run]
            cpu = round(result['cpu_seconds'], 1)
            lines.append([run, seed, *(result[split] for split in splits), cpu])
    write_csv(outputs['csv'], ['run', 'seed', *splits, 'cpu_seconds'], lines, overwrite=overwrite)
    with open_output(outputs['json'], overwrite=overwrite) as file:
        json.dump({str(s): results[str(s)] for s in seeds}, file, indent=1)
    plot_study(arms, pairs, outputs['png'], overwrite=overwrite)
    log(text)
    log(f'wrote {", ".join(outputs.values())}')


def render_fidelity(rows: list[dict], seeds: Sequence[int]) -> str:
    """The fidelity Markdown: per student and teacher each of :data:`FIDELITY_COLUMNS` (mean ±
    std over seeds), and a distilled student's paired difference from the student alone to the
    same teacher."""
    table = render_table(
        [
            'student',
            'teacher',
            *(name for name, _, _ in FIDELITY_COLUMNS.values()),
            *(paired for _, paired, _ in FIDELITY_COLUMNS.values()),
        ],
        [
            [
                row['student'],
                row['teacher'],
                *(format_mean_std(row['values'][k], d) for k, (*_, d) in FIDELITY_COLUMNS.items()),
                *(
                    '-' if row['paired'] is None else _interval(row['paired'][k], d)
                    for k, (*_, d) in FIDELITY_COLUMNS.items()
                ),
            ]
            for row in rows
        ],
    )
    return (
        f'{table}\n\nOn test, every student against both teachers of its seed (seeds '
        f'{_seeds(seeds)}; mean ± sample std); paired differences with a 95 % Student-t interval '
        f'with {len(seeds) - 1} degrees of freedom. KL(p_teacher ‖ p_student) of the softmaxes.\n'
    )


def write_fidelity_outputs(
    outputs: dict[str, str],
    scores: dict,
    rows: list[dict],
    seeds: Sequence[int],
    *,
    overwrite: bool,
    log: Callable[[str], None],
) -> None:
    """Write the fidelity table (``outputs['md']``) and every seed's values
    (``outputs['json']``: ``{seed: {student: {teacher: keys}}}``)."""
    text = render_fidelity(rows, seeds)
    with open_output(outputs['md'], overwrite=overwrite) as file:
        file.write(text)
    with open_output(outputs['json'], overwrite=overwrite) as file:
        json.dump(scores, file, indent=1)
    log(text)
    log(f'wrote {", ".join(outputs.values())}')


# ----------------------------------------------------------------------------- RKD weight search
def render_search(
    rows: list[dict], seeds: Sequence[int], student: list[float], chosen: float
) -> str:
    """The search's Markdown: one row per weight, then what the columns are and the choice."""
    terms = list(TERM_COLORS)
    header = [
        'RKD loss weight',
        '(distance, angle)',
        'val top-1 (%)',
        '− student alone [95 % CI]',
        'agreement with teacher (%)',
        *[f'‖∇ {t[5:]}‖' for t in terms],
        *[f'{t[5:]} value' for t in terms],
    ]
    table = render_table(
        header,
        [
            [
                f'{r["weight"]:g}' + (' (paper)' if r['weight'] == 1 else ''),
                f'({25 * r["weight"]:g}, {50 * r["weight"]:g})',
                format_mean_std(r['val']),
                _interval(r['vs_student']),
                format_mean_std(r['agreement']),
                *[f'{r[f"{t}/grad_norm"]:.3g}' for t in terms],
                *[f'{r[f"{t}/value"]:.3g}' for t in terms],
            ]
            for r in rows
        ],
    )
    return (
        f'{table}\n\nKD+RKD ← plain teacher, val split, seeds {_seeds(seeds)}; '
        f'student alone {format_mean_std(student)}. Mean ± sample std over seeds; the difference '
        f'is paired by seed with a 95 % Student-t interval ({len(seeds) - 1} degrees of freedom). '
        "‖∇ term‖: L2 norm of the weighted term's gradient on all the student's parameters, "
        'and value: the weighted term, each the median over the diagnostic steps of every seed.'
        f'\n\nChosen (highest mean val top-1): RKD loss weight {chosen:g}.\n'
    )


def plot_search(
    rows: list[dict],
    search: dict,
    seeds: Sequence[int],
    chosen: float,
    path: str,
    data: str,
    **policy,
) -> None:
    """Per-term values and gradient norms of the first seed at the largest searched weight (the
    paper's, 1, where it was searched) and the gradient norms at the chosen one (at the smallest
    where the largest is chosen); per weight the paired difference to the student alone, val
    top-1 and agreement. ``data``: the study's data, for the title."""
    plt = _pyplot()
    figure, axes = plt.subplots(2, 3, figsize=(15, 8), layout='constrained')
    seed = str(seeds[0])
    weights = [row['weight'] for row in rows]
    largest = max(weights)
    other = chosen if chosen != largest else min(weights)
    for ax, weight, stat, title in (
        (axes[0, 0], largest, 'value', 'weighted loss per term'),
        (axes[0, 1], largest, 'grad_norm', '‖∇θ_student‖ per term'),
        (axes[0, 2], other, 'grad_norm', '‖∇θ_student‖ per term'),
    ):
        cell = search[seed][f'{weight:g}']
        for term, color in TERM_COLORS.items():
            ax.plot(cell['steps'], cell['terms'][term][stat], color=color, label=term[5:])
        ax.set_yscale('log')
        ax.set_xlabel('iteration')
        ax.set_title(f'{title}: RKD weight {weight:g}, seed {seed}', fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    shared = axes[0, 1].get_ylim(), axes[0, 2].get_ylim()
    limits = (min(shared[0][0], shared[1][0]), max(shared[0][1], shared[1][1]))
    axes[0, 1].set_ylim(limits)
    axes[0, 2].set_ylim(limits)
    xs = range(len(rows))
    labels = [f'{r["weight"]:g}' for r in rows]
    ax = axes[1, 0]
    for i, r in enumerate(rows):
        _error_bar(ax, i, r['vs_student'], 'k')
    ax.axhline(0, color='k', linewidth=0.8)
    ax.set_xticks(xs, labels)
    ax.set_xlabel('RKD loss weight (1 = distance 25, angle 50)')
    ax.set_ylabel('val top-1: KD+RKD − student alone')
    ax.set_title('paired difference, 95 % t-interval', fontsize=9)
    for ax, key, label in (
        (axes[1, 1], 'val', 'val top-1 (%)'),
        (axes[1, 2], 'agreement', 'val top-1 agreement with teacher (%)'),
    ):
        for i, r in enumerate(rows):
            ax.bar(i, mean_std(r[key])[0], color='tab:blue', alpha=0.4)
            ax.plot([i] * len(r[key]), r[key], 'k.', markersize=6)
        ax.set_xticks(xs, labels)
        ax.set_xlabel('RKD loss weight')
        ax.set_ylabel(label)
        ax.grid(alpha=0.3, axis='y')
    figure.suptitle(f'KD+RKD ← plain teacher on {data} (val): RKD loss weight search', fontsize=10)
    save_figure(figure, path, dpi=110, **policy)


def write_search_outputs(
    outputs: dict[str, str],
    rows: list[dict],
    search: dict,
    student: dict[str, float],
    seeds: Sequence[int],
    chosen: float,
    *,
    data: str,
    overwrite: bool,
    log: Callable[[str], None],
) -> None:
    """Write the search's ``outputs`` (``md``, ``csv``, ``png``, ``json``) from its rows, its
    runs ``search[str(seed)][f'{weight:g}']`` and the student alone's val top-1 per seed;
    ``data``: the study's data as its chart names it."""
    text = render_search(rows, seeds, list(student.values()), chosen)
    with open_output(outputs['md'], overwrite=overwrite) as file:
        file.write(text)
    lines = []
    for seed in seeds:
        for weight in (row['weight'] for row in rows):
            cell = search[str(seed)][f'{weight:g}']
            cpu = round(cell['cpu_seconds'], 1)
            lines.append([weight, seed, cell['val'], student[str(seed)], cell['agreement'], cpu])
    header = ['weight', 'seed', 'val', 'student_val', 'agreement', 'cpu_seconds']
    write_csv(outputs['csv'], header, lines, overwrite=overwrite)
    with open_output(outputs['json'], overwrite=overwrite) as file:
        json.dump({'student_val': student, 'runs': search}, file, indent=1)
    plot_search(rows, search, seeds, chosen, outputs['png'], data, overwrite=overwrite)
    log(text)
    log(f'wrote {", ".join(outputs.values())}')
