"""Render the reproduction matrix, ``docs/reproduction.md``, from ``configs/*/metafile.yml``.

One row per paper-table cell of the four source papers: every numeric cell of a table that
``docs/paper-tables.md`` marks with ``<!-- cells: paper="..." table="..." -->``. Each cell must be
the ``Results`` entry of exactly one model in a metafile, with the number printed in
paper-tables.md; a model whose ``Config`` is null is listed as "no config", so gaps stay visible.

    python tools/misc/render_reproduction.py --check       # exit 1 if docs/reproduction.md is stale
    python tools/misc/render_reproduction.py --overwrite   # regenerate docs/reproduction.md

The output is ``docs/reproduction.md`` unless ``--out`` says otherwise. Although that file is
generated, the tool treats it like any other output: it never replaces an existing file whose
text differs without ``--overwrite`` (so a hand edit is not lost silently), and leaves one with
the same text alone. Metafile schema (mmpretrain style, plus one
``Results`` entry per paper cell)::

    Collections:
      - Name: 3D                      # a source paper's collection is named by its key
        Paper: {Title: ..., Authors: ..., Venue: ..., URL: ... or null}   # or null
        Note: ...                     # optional
        README: configs/3d/README.md
    Models:
      - Name: 3d_coco_vgg13_bn_to_mobilenet_v2
        In Collection: 3D
        Config: configs/3d/3d_coco_vgg13_bn_to_mobilenet_v2.py   # null: no config yet
        Weights: null
        Command: null                 # optional: replaces the default train / test commands
        Results:
          - {Paper: 3D, Table: B.1, Row: 3D (Ours), Column: VGG13→MBV2 mAP, Dataset: MS-COCO 2014,
             Metric: mAP, Paper Number: '74.34', Our Number: null}

``Paper Number`` is a string, as printed (``'73.80'`` keeps its zero); ``Our Number`` is a
measured result of that exact config (a number) or null.
"""

from __future__ import annotations

import argparse
import glob
import os.path as osp
import re
import sys
from typing import NamedTuple

import yaml

from mlkd.utils.output_policy import write_text

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
PAPER_TABLES = osp.join(REPO, 'docs', 'paper-tables.md')
CONFIGS = osp.join(REPO, 'configs')
OUTPUT = osp.join(REPO, 'docs', 'reproduction.md')

MARKER = re.compile(r'<!-- cells: (.*?) -->')
MARKER_FIELD = re.compile(r'([a-z-]+)="([^"]*)"')
NUMBER = re.compile(r'-?\d+(\.\d+)?')
RESULT_KEYS = ('Paper', 'Table', 'Row', 'Column', 'Dataset', 'Metric', 'Paper Number', 'Our Number')
MODEL_KEYS = ('Name', 'In Collection', 'Config', 'Weights', 'Results')


class PaperCell(NamedTuple):
    """One numeric cell of a marked table in docs/paper-tables.md, as printed (bold removed)."""

    paper: str
    table: str
    row: str
    column: str
    number: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.paper, self.table, self.row, self.column


class CellEntry(NamedTuple):
    """One ``Results`` entry of a metafile model: the config that reproduces one paper cell."""

    paper: str
    table: str
    row: str
    column: str
    dataset: str
    metric: str
    paper_number: str
    our_number: float | None
    config: str | None
    command: str | None
    model: str
    metafile: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.paper, self.table, self.row, self.column


def _table_rows(lines: list[str]) -> list[list[str]]:
    """Cells of the Markdown table that starts at ``lines[0]`` (header first, rule dropped)."""
    rows = []
    for line in lines:
        if not line.startswith('|'):
            break
        rows.append([cell.strip() for cell in line.strip().strip('|').split('|')])
    return [rows[0], *rows[2:]]


def read_paper_cells(path: str = PAPER_TABLES) -> list[PaperCell]:
    """Every numeric cell of the marked tables of ``path``, in reading order.

    A marker applies to the first table after it; the row label is the last of its
    ``label-columns`` leading columns (default 1). Cells such as "-" or "n/a" are skipped.
    """
    with open(path, encoding='utf-8') as file:
        lines = file.read().split('\n')
    cells = []
    for index, line in enumerate(lines):
        found = MARKER.search(line)
        if not found:
            continue
        fields = dict(MARKER_FIELD.findall(found.group(1)))
        if 'paper' not in fields or 'table' not in fields:
            raise ValueError(
                f'{path}:{index + 1}: marker needs paper="..." and table="...": {line.strip()}'
            )
        labels = int(fields.get('label-columns', '1'))
        start = next((i for i in range(index + 1, len(lines)) if lines[i].startswith('|')), None)
        if start is None:
            raise ValueError(f'{path}:{index + 1}: no table after the marker')
        header, *body = _table_rows(lines[start:])
        for row in body:
            if len(row) != len(header):
                raise ValueError(
                    f'{path}: row {row[:labels]} of table {fields["table"]} has '
                    f'{len(row)} cells, its header {len(header)}'
                )
            for column, value in zip(header[labels:], row[labels:]):
                value = value.strip('*')
                if NUMBER.fullmatch(value):
                    cells.append(
                        PaperCell(fields['paper'], fields['table'], row[labels - 1], column, value)
                    )
    return cells


def _require(mapping: object, keys: tuple[str, ...], where: str) -> None:
    if not isinstance(mapping, dict):
        raise ValueError(f'{where}: expected a mapping, got {mapping!r}')
    missing = [key for key in keys if key not in mapping]
    if missing:
        raise ValueError(f'{where}: missing key(s) {missing}')


def read_metafiles(configs: str = CONFIGS) -> tuple[dict[str, dict], list[CellEntry]]:
    """Collections by name and every paper cell entry of ``configs/*/metafile.yml``.

    Raises ``ValueError`` naming the file and model of a malformed entry.
    """
    collections: dict[str, dict] = {}
    entries = []
    for path in sorted(glob.glob(osp.join(configs, '*', 'metafile.yml'))):
        where = osp.relpath(path, osp.dirname(configs))
        with open(path, encoding='utf-8') as file:
            meta = yaml.safe_load(file)
        _require(meta, ('Collections', 'Models'), where)
        for collection in meta['Collections']:
            _require(collection, ('Name', 'Paper'), f'{where}: collection')
            if collection['Name'] in collections:
                raise ValueError(
                    f'{where}: collection {collection["Name"]!r} is also defined '
                    'in another metafile'
                )
            collections[collection['Name']] = collection
        for model in meta['Models']:
            _require(model, MODEL_KEYS, f'{where}: model {model.get("Name")!r}')
            for result in model['Results'] or []:
                _require(result, RESULT_KEYS, f'{where}: model {model["Name"]!r}, result')
                if not isinstance(result['Paper Number'], str):
                    raise ValueError(
                        f'{where}: model {model["Name"]!r}: Paper Number '
                        f'{result["Paper Number"]!r} must be a quoted string, as '
                        'printed in docs/paper-tables.md'
                    )
                ours = result['Our Number']
                if ours is not None and not isinstance(ours, (int, float)):
                    raise ValueError(
                        f'{where}: model {model["Name"]!r}: Our Number {ours!r} '
                        'must be a number or null'
                    )
                entries.append(
                    CellEntry(
                        str(result['Paper']),
                        str(result['Table']),
                        str(result['Row']),
                        str(result['Column']),
                        str(result['Dataset']),
                        str(result['Metric']),
                        result['Paper Number'],
                        ours,
                        model['Config'],
                        model.get('Command'),
                        str(model['Name']),
                        where,
                    )
                )
    return collections, entries


def find_problems(
    cells: list[PaperCell], collections: dict[str, dict], entries: list[CellEntry]
) -> list[str]:
    """What keeps the metafiles from matching docs/paper-tables.md one to one (empty: nothing)."""
    problems = []
    by_key: dict[tuple, list[CellEntry]] = {}
    for entry in entries:
        by_key.setdefault(entry.key, []).append(entry)
    known = {cell.key: cell for cell in cells}
    for cell in cells:
        found = by_key.get(cell.key, [])
        if not found:
            problems.append(f'paper cell {cell.key} is in no metafile')
        elif len(found) > 1:
            problems.append(
                f'paper cell {cell.key} is in several models: '
                f'{[(e.metafile, e.model) for e in found]}'
            )
        for entry in found:
            if entry.paper_number != cell.number:
                problems.append(
                    f'{entry.metafile}: model {entry.model!r}: Paper Number '
                    f'{entry.paper_number} for {cell.key}, docs/paper-tables.md '
                    f'prints {cell.number}'
                )
    for entry in entries:
        if entry.key not in known:
            problems.append(
                f'{entry.metafile}: model {entry.model!r} names {entry.key}, which '
                'is no marked cell of docs/paper-tables.md'
            )
        if entry.paper not in collections:
            problems.append(
                f'{entry.metafile}: model {entry.model!r}: Paper {entry.paper!r} '
                'is no collection of any metafile'
            )
    return problems


def _citation(collection: dict) -> str:
    paper = collection['Paper']
    text = f'{paper["Authors"]}, "{paper["Title"]}", {paper["Venue"]}'
    return f'{text}, {paper["URL"]}' if paper.get('URL') else text


def render(cells: list[PaperCell], collections: dict[str, dict], entries: list[CellEntry]) -> str:
    """The Markdown of docs/reproduction.md (cells in docs/paper-tables.md order)."""
    entry_of = {entry.key: entry for entry in entries}
    papers = list(dict.fromkeys(cell.paper for cell in cells))
    lines = [
        '# Reproduction matrix',
        '',
        'Generated by `python tools/misc/render_reproduction.py` from `configs/*/metafile.yml`; '
        'do not edit by hand (`--check` tells whether this file is up to date). One row per '
        'numeric cell of the results tables in [paper-tables.md](paper-tables.md): the number '
        'the paper prints, the config meant to reproduce it ("no config" where none exists '
        'yet), our number (only a measured run of that exact config; otherwise "not run") and '
        'the commands. `CHECKPOINT` is the checkpoint the training run writes; on a '
        'distillation config `tools/test.py` evaluates the student.',
        '',
        '| paper | table | cells | with a config | with our number |',
        '|---|---|---|---|---|',
    ]
    tables = list(dict.fromkeys((cell.paper, cell.table) for cell in cells))
    for paper, table in tables:
        group = [entry_of[c.key] for c in cells if (c.paper, c.table) == (paper, table)]
        lines.append(
            f'| {paper} | {table} | {len(group)} | '
            f'{sum(e.config is not None for e in group)} | '
            f'{sum(e.our_number is not None for e in group)} |'
        )
    every = [entry_of[c.key] for c in cells]
    lines.append(
        f'| all | | {len(every)} | {sum(e.config is not None for e in every)} | '
        f'{sum(e.our_number is not None for e in every)} |'
    )
    for paper in papers:
        lines += [
            '',
            f'## {paper}',
            '',
            f'Source: {_citation(collections[paper])}.',
            '',
            '| paper | table | cell (method / column) | dataset | metric | paper number | '
            'config | ours | command |',
            '|---|---|---|---|---|---|---|---|---|',
        ]
        for cell in (c for c in cells if c.paper == paper):
            entry = entry_of[cell.key]
            if entry.config is None:
                config, command = 'no config', '—'
            else:
                config = f'`{entry.config}`'
                command = (
                    f'`{entry.command}`'
                    if entry.command
                    else f'`python tools/train.py {entry.config}`, then '
                    f'`python tools/test.py {entry.config} CHECKPOINT`'
                )
            ours = 'not run' if entry.our_number is None else f'{entry.our_number:.2f}'
            lines.append(
                f'| {paper} | {cell.table} | {cell.row} / {cell.column} | '
                f'{entry.dataset} | {entry.metric} | {cell.number} | {config} | {ours} '
                f'| {command} |'
            )
    return '\n'.join(lines) + '\n'


def build(paper_tables: str = PAPER_TABLES, configs: str = CONFIGS) -> str:
    """Read, check and render; ``ValueError`` listing every mismatch if the inputs disagree."""
    cells = read_paper_cells(paper_tables)
    collections, entries = read_metafiles(configs)
    problems = find_problems(cells, collections, entries)
    if problems:
        raise ValueError('metafiles and docs/paper-tables.md disagree:\n  ' + '\n  '.join(problems))
    return render(cells, collections, entries)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description='Render docs/reproduction.md (paper cell -> config -> our number) from '
        'configs/*/metafile.yml and docs/paper-tables.md'
    )
    parser.add_argument(
        '--out', default=OUTPUT, help='output Markdown file (default: docs/reproduction.md)'
    )
    parser.add_argument(
        '--check',
        action='store_true',
        help='write nothing; exit 1 if the output is missing or stale',
    )
    parser.add_argument(
        '--overwrite', action='store_true', help='replace an existing output whose text differs'
    )
    parser.add_argument(
        '--paper-tables',
        default=PAPER_TABLES,
        help='the transcribed tables (default: docs/paper-tables.md)',
    )
    parser.add_argument(
        '--configs',
        default=CONFIGS,
        help='folder holding <folder>/metafile.yml (default: configs/)',
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        text = build(args.paper_tables, args.configs)
    except ValueError as error:
        print(f'render_reproduction: {error}', file=sys.stderr)
        return 1
    current = None
    if osp.exists(args.out):
        with open(args.out, encoding='utf-8') as file:
            current = file.read()
    if current == text:
        print(f'{args.out} is up to date')
        return 0
    if args.check:
        print(
            f'{args.out} is {"stale" if current is not None else "missing"}: run '
            'python tools/misc/render_reproduction.py --overwrite',
            file=sys.stderr,
        )
        return 1
    if current is not None and not args.overwrite:
        print(
            f'render_reproduction: {args.out} exists with other text; pass --overwrite to '
            'replace it',
            file=sys.stderr,
        )
        return 1
    # The differing text is replaced only with --overwrite (checked above); never an input.
    write_text(args.out, text, inputs=[args.paper_tables], overwrite=True)
    print(f'written to {args.out}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
