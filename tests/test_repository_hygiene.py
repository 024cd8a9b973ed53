"""Repository-level rules: what git ignores, and how the source papers are cited."""
import os
import os.path as osp
import re
import shutil
import subprocess

import pytest

from conftest import REPO


@pytest.mark.skipif(shutil.which('git') is None, reason='needs the git command')
def test_gitignore_hides_only_the_top_level_build_and_dist(tmp_path):
    """``build/`` and ``dist/`` unanchored also hid any ``build`` / ``dist`` folder in the tree
    (a ``mlkd/models/build`` package, a ``tools/dist`` folder) from ``git add``."""
    subprocess.run(['git', 'init', '-q', str(tmp_path)], check=True)
    shutil.copy(osp.join(REPO, '.gitignore'), tmp_path / '.gitignore')
    paths = ['build/lib/mlkd/__init__.py', 'dist/mlkd-0.1.tar.gz', 'work_dirs/run/epoch_1.pth',
             'mlkd/models/build/x.py', 'mlkd/build/x.py', 'tools/dist/x.sh', 'tools/build/x.py',
             'docs/dist/x.md']
    out = subprocess.run(['git', 'check-ignore', '--no-index', *paths], cwd=tmp_path,
                         capture_output=True, text=True)
    assert out.returncode in (0, 1), out.stderr
    assert out.stdout.split() == paths[:3]


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


@pytest.mark.parametrize('root', SCANNED)
def test_papers_are_cited_by_title_not_by_internal_file_name(root):
    """Readers outside the project cannot resolve ``<nnn>_<hash>.txt`` or ``004 Fig. D.1``:
    the papers are cited by title, authors and venue (docs/methods.md lists them)."""
    hits = []
    for path in _text_files(osp.join(REPO, root)):
        try:
            with open(path, encoding='utf-8') as f:
                lines = f.read().splitlines()
        except UnicodeDecodeError:  # images
            continue
        for number, line in enumerate(lines, 1):
            match = SEED_NAME.search(line)
            if match:
                hits.append(f'{osp.relpath(path, REPO)}:{number}: {match.group(0)!r} in '
                            f'{line.strip()[:100]}')
    assert not hits, (f'{len(hits)} line(s) cite a source document by its internal file name; '
                      'cite the paper (title, authors, venue) instead:\n' + '\n'.join(hits))
