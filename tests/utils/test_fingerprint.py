"""fingerprint(cfg): the one digest of "which config made this result" (mlkd/utils/fingerprint.py)."""

import hashlib
import json
import os.path as osp

from mmengine.config import Config

from mlkd.utils.fingerprint import fingerprint, flatten_config


def _by_hand(pairs: dict[str, str]) -> str:
    """The digest written from its definition: sha256 of the sorted (key, repr) pairs as JSON."""
    text = json.dumps(sorted(pairs.items()), ensure_ascii=True)
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def test_digest_of_the_sorted_leaves_in_any_key_order():
    cfg = dict(model=dict(type='X', layers=[1, 2.0], head=dict()), lr=0.1, work_dir='/somewhere')
    expected = _by_hand(
        {
            'model.type': "'X'",
            'model.layers.0': '1',
            'model.layers.1': '2.0',
            'model.head': '{}',
            'lr': '0.1',
        }
    )  # work_dir is a location key: left out
    assert fingerprint(cfg) == expected
    assert fingerprint(Config(dict(lr=0.1, model=dict(head={}, layers=[1, 2.0], type='X')))) == (
        expected
    )
    assert fingerprint(dict(cfg, lr=0.2)) != expected
    assert fingerprint(dict(cfg, model=dict(cfg['model'], layers=[1, 2]))) != expected  # 2 vs 2.0
    assert fingerprint(cfg, ignore=('model',)) == _by_hand(
        {'lr': '0.1', 'work_dir': "'/somewhere'"}
    )


def test_places_make_paths_independent_of_where_the_folders_are(tmp_path):
    """The same config in two checkouts (or two work dirs) has one fingerprint; a path that
    only shares a prefix of a folder's name is not in it."""

    def cfg(root: str, work: str) -> dict:
        return dict(
            student=osp.join(root, 'configs', 'student.py'),
            cache=osp.join(work, 'seed0', 'teacher_cache'),
            other=root + 'x/file.py',  # not inside root
            name='student',
        )

    a_root, a_work = str(tmp_path / 'a'), str(tmp_path / 'a' / 'work_dirs' / 'demo')
    b_root, b_work = str(tmp_path / 'b'), 'relative/work'  # a work dir given relative
    a = fingerprint(cfg(a_root, a_work), places={a_root: '<repo>', a_work: '<work-dir>'})
    b = fingerprint(cfg(b_root, b_work), places={b_root: '<repo>', b_work: '<work-dir>'})
    flat = flatten_config(cfg(a_root, a_work), places={a_root: '<repo>', a_work: '<work-dir>'})
    # the work dir inside the repository is matched first (the deeper folder)
    assert flat['cache'] == repr(osp.join('<work-dir>', 'seed0', 'teacher_cache'))
    assert flat['student'] == repr(osp.join('<repo>', 'configs', 'student.py'))
    assert flat['other'] == repr(a_root + 'x/file.py') and flat['name'] == "'student'"
    assert a != b  # 'other' still names each checkout
    same = dict(places={a_root: '<repo>', a_work: '<work-dir>'})
    again = dict(places={b_root: '<repo>', b_work: '<work-dir>'})
    strip = ('other',)
    assert fingerprint(cfg(a_root, a_work), strip, **same) == fingerprint(
        cfg(b_root, b_work), strip, **again
    )
    # Without places the fingerprint is that of the paths as written.
    assert fingerprint(cfg(a_root, a_work)) == _by_hand(
        {k: repr(v) for k, v in cfg(a_root, a_work).items()}
    )
