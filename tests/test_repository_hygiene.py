"""Repository-level rules: what git ignores, what CI runs, and how the source papers are cited."""

import os
import os.path as osp
import re
import shutil
import subprocess

import pytest
from conftest import REPO


def test_test_files_have_unique_names():
    """tests/ has no __init__.py files: pytest imports each test file under its base name, so two
    files of one name in different folders cannot both be collected."""
    seen: dict[str, list[str]] = {}
    for folder, _, files in os.walk(osp.join(REPO, 'tests')):
        for name in files:
            if name.endswith('.py'):
                seen.setdefault(name, []).append(osp.relpath(osp.join(folder, name), REPO))
    assert '__init__.py' not in seen
    assert not {name: paths for name, paths in seen.items() if len(paths) > 1}


@pytest.mark.skipif(shutil.which('git') is None, reason='needs the git command')
def test_gitignore_hides_only_the_top_level_build_and_dist(tmp_path):
    """``build/`` and ``dist/`` unanchored also hid any ``build`` / ``dist`` folder in the tree
    (a ``mlkd/models/build`` package, a ``tools/dist`` folder) from ``git add``."""
    subprocess.run(['git', 'init', '-q', str(tmp_path)], check=True)
    shutil.copy(osp.join(REPO, '.gitignore'), tmp_path / '.gitignore')
    paths = [
        'build/lib/mlkd/__init__.py',
        'dist/mlkd-0.1.tar.gz',
        'work_dirs/run/epoch_1.pth',
        'mlkd/models/build/x.py',
        'mlkd/build/x.py',
        'tools/dist/x.sh',
        'tools/build/x.py',
        'docs/dist/x.md',
    ]
    out = subprocess.run(
        ['git', 'check-ignore', '--no-index', *paths], cwd=tmp_path, capture_output=True, text=True
    )
    assert out.returncode in (0, 1), out.stderr
    assert out.stdout.split() == paths[:3]


def _readme_set_up_commands() -> list[str]:
    """The command lines of the README's "Set up and run" block (comments left out)."""
    with open(osp.join(REPO, 'README.md'), encoding='utf-8') as f:
        text = f.read()
    section = text[text.index('## Set up and run') :]
    block = section[section.index('```bash\n') + len('```bash\n') :]
    block = block[: block.index('```')]
    return [line for line in block.splitlines() if line.strip() and not line.startswith('#')]


@pytest.mark.skipif(shutil.which('bash') is None, reason='needs bash')
def test_ci_runs_the_readme_set_up_commands_in_a_fresh_venv_then_ruff():
    """``.ci/run`` takes its commands from the README (so the two cannot drift apart), makes a
    fresh virtual environment for them, and runs ruff's lint and format checks."""
    out = subprocess.run(
        ['bash', osp.join(REPO, '.ci', 'run'), '--print-commands'],
        capture_output=True,
        text=True,
        check=True,
    )
    commands = out.stdout.splitlines()
    assert commands == _readme_set_up_commands() and len(commands) == 2
    assert all('pip install -e ' in c and '-c requirements/constraints.txt' in c for c in commands)
    with open(osp.join(REPO, '.ci', 'run'), encoding='utf-8') as f:
        lines = [line.strip() for line in f if not line.lstrip().startswith('#')]
    assert '"${PYTHON:-python3}" -m venv "$work/venv"' in lines
    assert lines.index('ruff check .') > lines.index('bash -euo pipefail -c "$command"')
    assert 'ruff format --check .' in lines


def _pinned(name: str) -> str:
    with open(osp.join(REPO, 'requirements', 'constraints.txt'), encoding='utf-8') as f:
        pins = dict(line.strip().split('==') for line in f if '==' in line)
    return pins[name]


def test_pre_commit_runs_the_pinned_ruff_lint_and_format():
    import yaml

    with open(osp.join(REPO, '.pre-commit-config.yaml'), encoding='utf-8') as f:
        hooks = {hook['id']: hook for repo in yaml.safe_load(f)['repos'] for hook in repo['hooks']}
    assert hooks['ruff-check']['entry'].startswith('ruff check')
    assert hooks['ruff-format']['entry'].startswith('ruff format')
    for hook in hooks.values():
        assert hook['additional_dependencies'] == [f'ruff=={_pinned("ruff")}']


#: The internal names of the source documents (``<nnn>_<hash>.txt`` in the shared ``seeds``
#: folder), whole, abbreviated (``004_...``, ``000_*.txt``) or as a bare number used as a citation
#: (``004 Table B.1``, ``(001)``, ``004's``). Digits inside other numbers (``50,000``, ``0.004``,
#: ``001.jpg``) are not citations.
SEED_NAME = re.compile(r'seeds/|\b00[0-4]_[0-9a-f*.]|(?<![\w.,/#*-])00[0-4](?!\w|[.,/-]\w)')
SCANNED = ('mlkd', 'tools', 'docs', 'configs', 'README.md')


def _text_files(root: str):
    if osp.isfile(root):
        yield root
        return
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in ('__pycache__', '.mim')]
        for name in names:
            yield osp.join(folder, name)


def _matching_lines(root: str, pattern: re.Pattern) -> list[str]:
    """``path:line: match in text`` for every line of the text files under ``root`` that
    ``pattern`` matches."""
    hits = []
    for path in _text_files(osp.join(REPO, root)):
        try:
            with open(path, encoding='utf-8') as f:
                lines = f.read().splitlines()
        except UnicodeDecodeError:  # images
            continue
        for number, line in enumerate(lines, 1):
            match = pattern.search(line)
            if match:
                hits.append(
                    f'{osp.relpath(path, REPO)}:{number}: {match.group(0)!r} in '
                    f'{line.strip()[:100]}'
                )
    return hits


@pytest.mark.parametrize('root', SCANNED)
def test_papers_are_cited_by_title_not_by_internal_file_name(root):
    """Readers outside the project cannot resolve ``<nnn>_<hash>.txt`` or ``004 Fig. D.1``:
    the papers are cited by title, authors and venue (docs/methods.md lists them)."""
    hits = _matching_lines(root, SEED_NAME)
    assert not hits, (
        f'{len(hits)} line(s) cite a source document by its internal file name; '
        'cite the paper (title, authors, venue) instead:\n' + '\n'.join(hits)
    )


#: A reference to the project's own issue tracker ("issue 21", "issues 11 and 22", "issue-21"): a
#: reader outside the project cannot follow it. Another project's issues are cited with their
#: repository and ``#`` (```Alibaba-MIIL/ASL``` issues #10) and are not matched.
ISSUE_REFERENCE = re.compile(r'\b[Ii]ssues?[ -]\d')


@pytest.mark.parametrize('root', SCANNED)
def test_docs_and_code_carry_no_issue_tracker_references(root):
    """Docs, configs, code and tools say what is true now and why, not which issue asked for it."""
    hits = _matching_lines(root, ISSUE_REFERENCE)
    assert not hits, 'references to issue numbers:\n' + '\n'.join(hits)


def test_the_issue_check_sees_what_it_should():
    assert ISSUE_REFERENCE.search('(issue 21)') and ISSUE_REFERENCE.search('issues 11 and 22')
    assert ISSUE_REFERENCE.search('the issue-21 run') and ISSUE_REFERENCE.search('Issue 8:')
    assert not ISSUE_REFERENCE.search('maintainer answers in issues #10, #31')
    assert not ISSUE_REFERENCE.search('one issue that needs the distiller')


#: A column of published numbers in a README table: ``paper <metric>`` (not the citation column
#: ``paper`` nor ``paper defaults``), a paper's table named in the header (``..., Table 1``) or
#: numbers reprinted from a code base's README (``mdistiller README top-1``).
PUBLISHED_COLUMN = re.compile(r'^paper\s+(?!defaults\b)\S|\bTable [A-Z]?\.?\d|README top-1')
#: A citation: a quoted title of at least two words, an author (``T. Kobayashi``, ``P. Yang et
#: al.``, ``Zagoruyko & Komodakis``) and a venue (or the explicit statement that the source gives
#: none, as the 3D supplement).
TITLE = re.compile(r'"[^"\s]+\s[^"]+"')
AUTHOR = re.compile(r"\b[A-Z]\.(?:\s?-?[A-Z]\.)*\s[A-Z][\w'-]+|\b[A-Z][\w'-]+ et al\.")
VENUE = re.compile(
    r'\b(?:CVPR|ICCV|ECCV|ICLR|NeurIPS|NIPS|WACV|AAAI|ACM MM|arXiv)\b'
    r'|venue is not stated'
)


def _readmes() -> list[str]:
    found = [osp.join(REPO, 'README.md')]
    for top in ('configs', 'docs'):
        for folder, _dirs, names in os.walk(osp.join(REPO, top)):
            found += [osp.join(folder, n) for n in names if n == 'README.md']
    return sorted(found)


def _paragraphs(lines: list[str]) -> list[str]:
    """Blank-line separated paragraphs of ``lines``, each joined into one string."""
    paragraphs, current = [], []
    for line in lines + ['']:
        if line.strip():
            current.append(line.strip())
        elif current:
            paragraphs.append(' '.join(current))
            current = []
    return paragraphs


def _source_paragraphs(lines: list[str]) -> list[str]:
    return [p for p in _paragraphs(lines) if p.lstrip('*_ ').startswith('Source')]


def _cites_a_paper(text: str) -> bool:
    return bool(TITLE.search(text) and AUTHOR.search(text) and VENUE.search(text))


def _paper_tables(lines: list[str]) -> list[tuple[int, str]]:
    """``(line index, header)`` of every table with a column of published numbers."""
    tables = []
    for index, line in enumerate(lines[:-1]):
        if not (line.startswith('|') and re.fullmatch(r'\|[\s:|-]+\|', lines[index + 1].strip())):
            continue
        if any(PUBLISHED_COLUMN.search(cell.strip()) for cell in line.strip('|').split('|')):
            tables.append((index, line))
    return tables


@pytest.mark.parametrize('path', _readmes(), ids=lambda p: osp.relpath(p, REPO))
def test_every_paper_table_has_a_source_line(path):
    """A README table of published numbers is preceded, in its section, by a paragraph starting
    with "Source" that cites the paper by title, authors and venue."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().splitlines()
    missing = []
    for index, header in _paper_tables(lines):
        start = max((i for i in range(index) if lines[i].startswith('#')), default=0)
        if not any(_cites_a_paper(p) for p in _source_paragraphs(lines[start:index])):
            missing.append(f'line {index + 1}: {header[:90]}')
    assert not missing, (
        f'{osp.relpath(path, REPO)}: paper tables without a source line citing '
        'the paper (title in quotes, authors, venue) in their section:\n' + '\n'.join(missing)
    )


@pytest.mark.parametrize('path', _readmes(), ids=lambda p: osp.relpath(p, REPO))
def test_every_source_line_cites_title_authors_and_venue(path):
    with open(path, encoding='utf-8') as f:
        lines = f.read().splitlines()
    vague = [p[:120] for p in _source_paragraphs(lines) if not _cites_a_paper(p)]
    assert not vague, (
        f'{osp.relpath(path, REPO)}: "Source" paragraphs without a title in '
        'quotes, authors and venue:\n' + '\n'.join(vague)
    )


@pytest.mark.parametrize('path', _readmes(), ids=lambda p: osp.relpath(p, REPO))
def test_paper_columns_quote_only_numbers_of_the_paper_tables(path):
    """A column of a paper's numbers holds numbers that docs/paper-tables.md transcribes from the
    papers (a code base's README, such as mdistiller's, is another source and says so in its
    header), not numbers from elsewhere."""
    with open(osp.join(REPO, 'docs', 'paper-tables.md'), encoding='utf-8') as f:
        printed = set(re.findall(r'\d+\.\d+', f.read()))
    with open(path, encoding='utf-8') as f:
        lines = f.read().splitlines()
    foreign = []
    for index, header in _paper_tables(lines):
        names = [cell.strip() for cell in header.strip('|').split('|')]
        columns = [
            k
            for k, name in enumerate(names)
            if PUBLISHED_COLUMN.search(name) and 'README' not in name
        ]
        for row in lines[index + 2 :]:
            if not row.startswith('|'):
                break
            cells = [cell.strip() for cell in row.strip('|').split('|')]
            foreign += [
                f'{cells[0]}: {names[k]} {number}'
                for k in columns
                if k < len(cells)
                for number in re.findall(r'\d+\.\d+', cells[k])
                if number not in printed
            ]
    assert not foreign, f'{osp.relpath(path, REPO)}: numbers in no paper table:\n' + '\n'.join(
        foreign
    )


def test_the_citation_checks_see_what_they_should():
    lines = [
        '# M',
        '',
        'Source: Zhao et al., CVPR 2022.',
        '',
        '| config | paper mAP | ours |',
        '|---|---|---|',
        '| a | 1 | |',
    ]
    assert _paper_tables(lines) == [(4, lines[4])]
    assert not _cites_a_paper(_source_paragraphs(lines)[0])  # no title
    assert _cites_a_paper('Source: B. Zhao et al., "Decoupled Knowledge Distillation", CVPR 2022')
    assert not _paper_tables(['| config | loss | paper defaults |', '|---|---|---|'])
    assert not _paper_tables(['| config | losses | paper |', '|---|---|---|'])


def test_every_registered_loss_cites_its_paper_by_title():
    """Each mlkd loss names its paper by a quoted title in its class, its module or its pure
    function's docstring (the authors and venue stand beside it)."""
    import inspect

    import mlkd.models.losses  # noqa: F401  (registers the losses)
    from mlkd.registry import MODELS

    losses = {
        name: cls
        for name, cls in MODELS.module_dict.items()
        if cls.__module__.startswith('mlkd.models.losses.')
    }
    assert len(losses) > 30
    untitled = []
    for name, cls in sorted(losses.items()):
        module = inspect.getmodule(cls)
        texts = [cls.__doc__ or '', module.__doc__ or ''] + [
            function.__doc__ or ''
            for _, function in inspect.getmembers(module, inspect.isfunction)
            if function.__module__ == module.__name__
        ]
        if not any(TITLE.search(text) for text in texts):
            untitled.append(f'{name} ({cls.__module__})')
    assert not untitled, 'losses whose docstrings cite no paper title:\n' + '\n'.join(untitled)
