"""The reproduction matrix: every paper cell marked in docs/paper-tables.md is in exactly one
``configs/*/metafile.yml`` model with the number printed there, every metafile config loads,
and docs/reproduction.md is what tools/misc/render_reproduction.py renders from them."""

from __future__ import annotations

import glob
import os.path as osp
import textwrap

import pytest
import yaml
from conftest import REPO, load_tool
from mmengine.config import Config

render_reproduction = load_tool('misc/render_reproduction')

pytestmark = pytest.mark.usefixtures('parse_shipped_configs_once')


@pytest.fixture(scope='module')
def paper_cells():
    return render_reproduction.read_paper_cells()


@pytest.fixture(scope='module')
def metafiles():
    return render_reproduction.read_metafiles()


def _metafile_configs() -> list[str]:
    _, entries = render_reproduction.read_metafiles()
    return sorted({entry.config for entry in entries if entry.config is not None})


def test_the_marked_tables_are_read_cell_by_cell(paper_cells):
    by_key = {cell.key: cell.number for cell in paper_cells}
    assert by_key[('3D', 'B.1', 'Teacher', 'VGG13→MBV2 mAP')] == '74.08'
    assert by_key[('3D', 'B.3', '3D (Ours)', 'CF1')] == '72.42'
    assert by_key[('Two-way', 'C(b)', 'ASL', 'mAP@sample')] == '83.73'
    # bold removed, the zero kept as printed; the row label of SCL B.1 is its second column
    assert by_key[('Intra-class', '1', 'Ours+RKD', 'CIFAR-100 VGG13→VGG8')] == '75.70'
    assert by_key[('SCL', 'B.1', 'EN + SCL', '1 label')] == '74.7'
    # Table 3: the interpretation, not the raw transcription; "-" and "n/a" are no cells
    assert ('Intra-class', '3', 'CRD', 'Heterog. ResNet50→MobileNetV2') not in by_key
    assert ('Intra-class', '3', 'Student', 'Heterog. WRN-40-2→ShuffleV2') not in by_key
    assert by_key[('Intra-class', '3', 'Student', 'Homog. ResNet50→ResNet34')] == '93.16'
    # dataset statistics carry no marker
    assert not [c for c in paper_cells if c.paper == 'SCL' and c.table.startswith('K')]
    assert len(by_key) == len(paper_cells)
    assert {(c.paper, c.table) for c in paper_cells} == {
        ('3D', 'B.1'),
        ('3D', 'B.2'),
        ('3D', 'B.3'),
        ('3D', 'C.4'),
        ('Two-way', 'B'),
        ('Two-way', 'C(b)'),
        ('Intra-class', '1'),
        ('Intra-class', '2'),
        ('Intra-class', '3'),
        ('SCL', 'B.1'),
    }


def test_every_paper_cell_is_in_exactly_one_metafile_model(paper_cells, metafiles):
    _, entries = metafiles
    counts: dict[tuple, int] = {}
    for entry in entries:
        counts[entry.key] = counts.get(entry.key, 0) + 1
    missing = [cell.key for cell in paper_cells if cell.key not in counts]
    repeated = [key for key, count in counts.items() if count > 1]
    unknown = sorted(set(counts) - {cell.key for cell in paper_cells})
    assert not missing, f'{len(missing)} paper cells in no metafile, e.g. {missing[:5]}'
    assert not repeated, f'cells in several models: {repeated[:5]}'
    assert not unknown, f'metafile cells that docs/paper-tables.md does not mark: {unknown[:5]}'


def test_metafile_paper_numbers_equal_paper_tables(paper_cells, metafiles):
    printed = {cell.key: cell.number for cell in paper_cells}
    _, entries = metafiles
    wrong = [
        (entry.metafile, entry.model, entry.key, entry.paper_number, printed[entry.key])
        for entry in entries
        if printed.get(entry.key) != entry.paper_number
    ]
    assert not wrong, wrong[:5]


def test_source_papers_are_collections_with_a_citation(metafiles):
    collections, entries = metafiles
    for paper in {entry.paper for entry in entries}:
        citation = collections[paper]['Paper']
        assert citation['Title'] and citation['Authors'] and citation['Venue'], paper


def test_every_config_folder_has_a_metafile_listing_its_configs():
    """A new config must be added to its folder's metafile (with ``Results: []`` if it
    reproduces no paper cell); a model without a config only stands for paper cells."""
    for folder in sorted(glob.glob(osp.join(REPO, 'configs', '*', ''))):
        name = osp.basename(osp.dirname(folder))
        if name == '_base_':
            continue
        metafile = osp.join(folder, 'metafile.yml')
        assert osp.isfile(metafile), f'configs/{name} has no metafile.yml'
        with open(metafile, encoding='utf-8') as file:
            models = yaml.safe_load(file)['Models']
        listed = sorted(m['Config'] for m in models if m['Config'] is not None)
        on_disk = sorted(
            osp.relpath(p, REPO) for p in glob.glob(osp.join(folder, '**', '*.py'), recursive=True)
        )
        assert listed == on_disk, f'configs/{name}/metafile.yml'
        assert all(m['Results'] for m in models if m['Config'] is None), name
        assert len({m['Name'] for m in models}) == len(models), name


@pytest.mark.parametrize('config', _metafile_configs())
def test_every_config_of_a_paper_cell_loads(config):
    """Configs with no paper cell are parsed by tests/configs/test_pair_configs.py (every
    config); those the matrix points users to are loaded here too, by their metafile path."""
    cfg = Config.fromfile(osp.join(REPO, config))
    assert 'model' in cfg and 'train_cfg' in cfg


def test_reproduction_md_is_up_to_date():
    with open(osp.join(REPO, 'docs', 'reproduction.md'), encoding='utf-8') as file:
        shipped = file.read()
    assert shipped == render_reproduction.build(), (
        'stale: run python tools/misc/render_reproduction.py --overwrite'
    )


# ---- the tool on a small synthetic pair of inputs ----

PAPER_TABLES = textwrap.dedent("""\
    # Tables
    <!-- cells: paper="P" table="1" -->

    | Method | A mAP | B mAP |
    |---|---|---|
    | Base | **1.50** | n/a |
    | Ours | 2.00 | - |

    <!-- cells: paper="P" table="2" label-columns="2" -->

    | Group | Method | X |
    |---|---|---|
    | g | Ours | 3.1 |

    | Unmarked | Y |
    |---|---|
    | a | 9 |
    """)


def _metafile(base_number: str = '1.50', extra: str = '') -> str:
    return (
        textwrap.dedent(f"""\
        Collections:
          - Name: P
            Paper: {{Title: A Paper, Authors: A. Author, Venue: Nowhere 2024, URL: null}}
        Models:
          - Name: p/base
            In Collection: P
            Config: configs/p/base.py
            Weights: null
            Results:
              - {{Paper: P, Table: '1', Row: Base, Column: A mAP, Dataset: D, Metric: mAP,
                  Paper Number: '{base_number}', Our Number: 1.234}}
          - Name: missing ours
            In Collection: P
            Config: null
            Weights: null
            Results:
              - {{Paper: P, Table: '1', Row: Ours, Column: A mAP, Dataset: D, Metric: mAP,
                  Paper Number: '2.00', Our Number: null}}
              - {{Paper: P, Table: '2', Row: Ours, Column: X, Dataset: D2, Metric: top-1,
                  Paper Number: '3.1', Our Number: null}}
        """)
        + extra
    )


def _extra_model(name: str, paper: str, table: str) -> str:
    """A model without a config, holding cell (paper, table, Base, A mAP), in metafile layout."""
    return (
        f'  - Name: {name}\n    In Collection: P\n    Config: null\n    Weights: null\n'
        f"    Results:\n      - {{Paper: {paper}, Table: '{table}', Row: Base, Column: A mAP, "
        f"Dataset: D, Metric: mAP, Paper Number: '1.50', Our Number: null}}\n"
    )


@pytest.fixture
def inputs(tmp_path):
    (tmp_path / 'configs' / 'p').mkdir(parents=True)
    (tmp_path / 'paper-tables.md').write_text(PAPER_TABLES, encoding='utf-8')
    (tmp_path / 'configs' / 'p' / 'metafile.yml').write_text(_metafile(), encoding='utf-8')
    return tmp_path


def _args(inputs, *extra: str) -> list[str]:
    return [
        '--paper-tables',
        str(inputs / 'paper-tables.md'),
        '--configs',
        str(inputs / 'configs'),
        '--out',
        str(inputs / 'out.md'),
        *extra,
    ]


def test_synthetic_cells_are_read_as_printed(inputs):
    cells = render_reproduction.read_paper_cells(str(inputs / 'paper-tables.md'))
    assert [tuple(c) for c in cells] == [
        ('P', '1', 'Base', 'A mAP', '1.50'),
        ('P', '1', 'Ours', 'A mAP', '2.00'),
        ('P', '2', 'Ours', 'X', '3.1'),
    ]


def test_render_lists_configs_gaps_and_our_numbers(inputs):
    text = render_reproduction.build(str(inputs / 'paper-tables.md'), str(inputs / 'configs'))
    assert '| P | 1 | 2 | 1 | 1 |' in text and '| P | 2 | 1 | 0 | 0 |' in text  # summary
    rows = [line for line in text.split('\n') if line.startswith('| P |') and ' / ' in line]
    assert rows[0] == (
        '| P | 1 | Base / A mAP | D | mAP | 1.50 | `configs/p/base.py` | 1.23 | '
        '`python tools/train.py configs/p/base.py`, then '
        '`python tools/test.py configs/p/base.py CHECKPOINT` |'
    )
    assert rows[1] == '| P | 1 | Ours / A mAP | D | mAP | 2.00 | no config | not run | — |'
    assert rows[2] == '| P | 2 | Ours / X | D2 | top-1 | 3.1 | no config | not run | — |'
    assert '| all | | 3 | 1 | 1 |' in text
    assert 'Source: A. Author, "A Paper", Nowhere 2024.' in text


@pytest.mark.parametrize(
    'base_number, extra, message',
    [
        (
            '1.5',
            '',
            "Paper Number 1.5 for ('P', '1', 'Base', 'A mAP'), docs/paper-tables.md prints 1.50",
        ),
        ('1.50', _extra_model('again', 'P', '1'), 'is in several models'),
        ('1.50', _extra_model('unknown', 'Q', '9'), "Paper 'Q' is no collection of any metafile"),
    ],
)
def test_mismatches_are_refused_by_name(inputs, base_number, extra, message):
    (inputs / 'configs' / 'p' / 'metafile.yml').write_text(
        _metafile(base_number, extra), encoding='utf-8'
    )
    with pytest.raises(ValueError, match='metafiles and docs/paper-tables.md disagree') as error:
        render_reproduction.build(str(inputs / 'paper-tables.md'), str(inputs / 'configs'))
    assert message in str(error.value)


def test_a_cell_in_no_metafile_is_refused(inputs):
    text = _metafile().replace('Row: Ours, Column: X', 'Row: Ours, Column: Z')
    (inputs / 'configs' / 'p' / 'metafile.yml').write_text(text, encoding='utf-8')
    with pytest.raises(ValueError) as error:
        render_reproduction.build(str(inputs / 'paper-tables.md'), str(inputs / 'configs'))
    assert "paper cell ('P', '2', 'Ours', 'X') is in no metafile" in str(error.value)
    assert "names ('P', '2', 'Ours', 'Z'), which is no marked cell" in str(error.value)


def test_a_model_may_name_its_own_command(inputs):
    base = "    Weights: null\n    Results:\n      - {Paper: P, Table: '1', Row: Base"
    text = _metafile().replace(
        base, base.replace('Results:', 'Command: python tools/x.py A\n    Results:')
    )
    assert 'Command: python tools/x.py A' in text
    (inputs / 'configs' / 'p' / 'metafile.yml').write_text(text, encoding='utf-8')
    rendered = render_reproduction.build(str(inputs / 'paper-tables.md'), str(inputs / 'configs'))
    assert '| `configs/p/base.py` | 1.23 | `python tools/x.py A` |' in rendered


def test_an_unquoted_paper_number_is_refused(inputs):
    text = _metafile().replace("Paper Number: '2.00'", 'Paper Number: 2.00')
    (inputs / 'configs' / 'p' / 'metafile.yml').write_text(text, encoding='utf-8')
    with pytest.raises(
        ValueError,
        match=r"p/metafile.yml: model 'missing ours': Paper Number "
        r'2.0 must be a quoted string',
    ):
        render_reproduction.read_metafiles(str(inputs / 'configs'))


def test_check_write_and_overwrite(inputs, capsys):
    out = inputs / 'out.md'
    assert render_reproduction.main(_args(inputs, '--check')) == 1  # missing
    assert render_reproduction.main(_args(inputs)) == 0
    written = out.read_text(encoding='utf-8')
    assert '| P | 2 | Ours / X |' in written
    assert render_reproduction.main(_args(inputs, '--check')) == 0
    assert render_reproduction.main(_args(inputs)) == 0  # same text: left alone
    out.write_text('hand-edited\n', encoding='utf-8')
    assert render_reproduction.main(_args(inputs, '--check')) == 1
    assert 'is stale' in capsys.readouterr().err
    assert render_reproduction.main(_args(inputs)) == 1  # no silent overwrite
    assert out.read_text(encoding='utf-8') == 'hand-edited\n'
    assert 'pass --overwrite' in capsys.readouterr().err
    assert render_reproduction.main(_args(inputs, '--overwrite')) == 0
    assert out.read_text(encoding='utf-8') == written
