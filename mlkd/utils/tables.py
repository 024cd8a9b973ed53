"""Tables the tools print and write: Markdown (for READMEs), terminaltables (for terminals), CSV.

Used by the tools of ``tools/analysis_tools`` and by :mod:`mlkd.apis` (standard library and
terminaltables only).
"""

from __future__ import annotations

import csv
import math
import statistics
from collections.abc import Sequence

TABLE_STYLES = ('markdown', 'ascii')


def render_table(
    header: Sequence[str],
    rows: Sequence[Sequence],
    style: str = 'markdown',
    title: str | None = None,
) -> str:
    """``rows`` under ``header`` as a Markdown table or a terminaltables ``AsciiTable``."""
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    if style == 'ascii':
        from terminaltables import AsciiTable

        return AsciiTable(cells, title=title).table
    if style != 'markdown':
        raise ValueError(f'table style must be one of {TABLE_STYLES}, got {style!r}')
    lines = [f'**{title}**', ''] if title else []
    lines.append('| ' + ' | '.join(cells[0]) + ' |')
    lines.append('|' + '|'.join('---' for _ in cells[0]) + '|')
    lines += ['| ' + ' | '.join(c.replace('|', '\\|') for c in row) + ' |' for row in cells[1:]]
    return '\n'.join(lines)


def write_csv(path: str, header: Sequence[str], rows: Sequence[Sequence], **policy) -> None:
    """Write a CSV file under the output policy (``policy``: ``inputs``, ``overwrite``; see
    :func:`mlkd.utils.output_policy.open_output`)."""
    from mlkd.utils.output_policy import open_output

    with open_output(path, 'w', newline='', **policy) as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)


def mean_std(values: Sequence[float]) -> tuple[float, float | None]:
    """Mean and sample standard deviation (n − 1); the std is ``None`` for a single value."""
    if not values:
        return math.nan, None
    if len(values) == 1:
        return float(values[0]), None
    return statistics.fmean(values), statistics.stdev(values)


def format_mean_std(values: Sequence[float], digits: int = 2) -> str:
    """``'71.23 ± 0.45'`` over several values, ``'71.23'`` for one, ``'-'`` for none."""
    if not values:
        return '-'
    mean, std = mean_std(values)
    return f'{mean:.{digits}f}' if std is None else f'{mean:.{digits}f} ± {std:.{digits}f}'


def format_seconds(seconds: float | None, *, hours: bool = False) -> str:
    """``75.2`` -> ``'1:15'``, with hours when there are any (``'1:02:03'``), or always with
    ``hours`` (``'0:01:15'``: a table column); ``'-'`` for ``None`` (not measured)."""
    if seconds is None:
        return '-'
    minutes, secs = divmod(max(int(round(seconds)), 0), 60)
    hours_part, minutes = divmod(minutes, 60)
    if hours_part or hours:
        return f'{hours_part}:{minutes:02d}:{secs:02d}'
    return f'{minutes}:{secs:02d}'
