"""TeacherOutputCache on its own: round trips, shards of several writers, and every refusal."""

import contextlib
import json
import os
import os.path as osp
import threading
from collections import namedtuple

import numpy as np
import pytest
import torch
import torch.multiprocessing as mp

from mlkd.teacher_cache import TeacherCacheError, TeacherOutputCache, written_epochs
from mlkd.teacher_cache import cache as tc
from mlkd.teacher_cache.format import LOCK_FILE, MANIFEST
from mlkd.utils import atomic

FINGERPRINT = dict(
    teacher_weights_sha256='a' * 64,
    dataset_sha256='b' * 64,
    seed=0,
    teacher_view=None,
    teacher_precision='float32',
    teacher_channels_last=False,
)
TAPS = ['t_logits', 't_stage3']


def _outputs(indices, epoch=0):
    """Deterministic fake teacher outputs of ``indices`` (a function of epoch and index)."""
    base = indices.double()[:, None] + 1000 * epoch
    return {
        't_logits': (base * 0.37 + torch.arange(5)).float().sin(),
        't_stage3': (base[:, :, None, None] * 0.11 + torch.ones(1, 3, 2, 2)).float().cos(),
    }


def _as_rank(monkeypatch, rank, world_size):
    monkeypatch.setattr(tc, 'get_rank', lambda: rank)
    monkeypatch.setattr(tc, 'get_world_size', lambda: world_size)
    monkeypatch.setattr(tc, 'barrier', lambda: None)


def _write(root, epochs, indices_by_rank, monkeypatch=None, dtype='float32', batch=3):
    """Write ``epochs`` with one cache object per rank (ranks in turn, as if in parallel)."""
    world_size = len(indices_by_rank)
    caches = []
    for rank in range(world_size):
        if monkeypatch is not None:
            _as_rank(monkeypatch, rank, world_size)
        cache = TeacherOutputCache(root, 'write', dtype)
        cache.open(FINGERPRINT, TAPS)
        caches.append(cache)
    for epoch in epochs:
        for rank, cache in enumerate(caches):
            if monkeypatch is not None:
                _as_rank(monkeypatch, rank, world_size)
            indices = torch.as_tensor(indices_by_rank[rank])
            cache.begin_epoch(epoch, len(indices))
            for start in range(0, len(indices), batch):
                part = indices[start : start + batch]
                cache.store(part, _outputs(part, epoch))
        for rank in reversed(range(world_size)):  # rank 0 last: it records the epoch
            if monkeypatch is not None:
                _as_rank(monkeypatch, rank, world_size)
            caches[rank].end_epoch()
    if monkeypatch is not None:
        _as_rank(monkeypatch, 0, 1)


def _reader(root, dtype='float32', fingerprint=FINGERPRINT, taps=TAPS):
    cache = TeacherOutputCache(root, 'read', dtype)
    cache.open(fingerprint, taps)
    return cache


def test_two_writers_read_by_one_process_give_the_written_values(tmp_path, monkeypatch):
    root = str(tmp_path / 'cache')
    _write(root, [0, 1], [[5, 0, 7, 2], [3, 6, 1, 4]], monkeypatch)
    manifest = json.load(open(osp.join(root, 'manifest.json')))
    assert manifest['epochs'] == {
        '0': {'rows': 8, 'world_size': 2},
        '1': {'rows': 8, 'world_size': 2},
    }
    assert manifest['taps'] == {
        't_logits': {'dtype': 'float32', 'shape': [5]},
        't_stage3': {'dtype': 'float32', 'shape': [3, 2, 2]},
    }
    cache = _reader(root)
    for epoch in (0, 1):
        cache.begin_epoch(epoch, 8)
        wanted = torch.tensor([4, 5, 0, 3, 6])  # rows of both shards, any order
        got = cache.load(wanted, 'cpu')
        for name, value in _outputs(wanted, epoch).items():
            assert torch.equal(got[name], value), (epoch, name)
        cache.end_epoch()


@pytest.mark.parametrize(
    'dtype, torch_dtype', [('float16', torch.float16), ('bfloat16', torch.bfloat16)]
)
def test_half_storage_rounds_to_its_dtype_and_returns_float32(tmp_path, dtype, torch_dtype):
    root = str(tmp_path / 'cache')
    _write(root, [0], [[0, 1, 2]], dtype=dtype)
    cache = _reader(root, dtype)
    cache.begin_epoch(0, 3)
    got = cache.load(torch.tensor([2, 0]), 'cpu')
    expected = _outputs(torch.tensor([2, 0]))['t_logits']
    assert got['t_logits'].dtype == torch.float32
    assert torch.equal(got['t_logits'], expected.to(torch_dtype).float())
    assert (
        osp.getsize(osp.join(root, 'epoch_0000', 'shard_00000_of_00001', 't_logits.bin'))
        == 3 * 5 * 2
    )


def test_every_fingerprint_field_is_checked_by_name(tmp_path):
    root = str(tmp_path / 'cache')
    _write(root, [0], [[0, 1]])
    for field, value in [
        ('teacher_weights_sha256', 'c' * 64),
        ('dataset_sha256', 'd' * 64),
        ('seed', 1),
        ('teacher_precision', 'autocast-float16'),
    ]:
        with pytest.raises(TeacherCacheError, match=f'{field} differs'):
            _reader(root, fingerprint=dict(FINGERPRINT, **{field: value}))
    with pytest.raises(TeacherCacheError, match='dtype differs'):
        _reader(root, dtype='float16')
    with pytest.raises(TeacherCacheError, match=r'taps differ.*t_stage4'):
        _reader(root, taps=['t_logits', 't_stage4'])
    # A writer with another fingerprint must not append to the cache either, nor one that would
    # leave the written epochs without a tap it writes (a reader of it would be refused later).
    with pytest.raises(TeacherCacheError, match='seed differs'):
        TeacherOutputCache(root, 'write').open(dict(FINGERPRINT, seed=2), TAPS)
    with pytest.raises(
        TeacherCacheError, match=r"for epochs \[0\], and this run also writes \['t_stage4'\]"
    ):
        TeacherOutputCache(root, 'write').open(FINGERPRINT, [*TAPS, 't_stage4'])


def test_epoch_beyond_those_written_is_refused(tmp_path):
    root = str(tmp_path / 'cache')
    _write(root, [0], [[0, 1]])
    cache = _reader(root)
    with pytest.raises(
        TeacherCacheError,
        match=r'epoch 1 was not written \(epochs written: '
        r'\[0\]\)',
    ):
        cache.begin_epoch(1, 2)


def test_sample_missing_from_the_epoch_is_refused(tmp_path):
    root = str(tmp_path / 'cache')
    _write(root, [0], [[0, 1]])
    cache = _reader(root)
    cache.begin_epoch(0, 2)
    with pytest.raises(TeacherCacheError, match=r'no row for sample index\(es\) \[7\]'):
        cache.load(torch.tensor([1, 7]), 'cpu')


def test_truncated_shard_is_refused_naming_the_file(tmp_path):
    root = str(tmp_path / 'cache')
    _write(root, [0], [[0, 1, 2]])
    path = osp.join(root, 'epoch_0000', 'shard_00000_of_00001', 't_stage3.bin')
    with open(path, 'r+b') as f:
        f.truncate(osp.getsize(path) - 4)
    cache = _reader(root)
    with pytest.raises(TeacherCacheError, match=r't_stage3\.bin is truncated'):
        cache.begin_epoch(0, 3)


def test_interrupted_write_leaves_the_epoch_unreadable(tmp_path):
    root = str(tmp_path / 'cache')
    _write(root, [0], [[0, 1]])
    writer = TeacherOutputCache(root, 'write')
    writer.open(FINGERPRINT, TAPS)
    writer.begin_epoch(1, 2)
    writer.store(torch.tensor([0, 1]), _outputs(torch.tensor([0, 1]), 1))
    # ... the process dies here: no end_epoch(). Nothing of epoch 1 is final or recorded.
    assert not osp.exists(osp.join(root, 'epoch_0001', 'shard_00000_of_00001'))
    with pytest.raises(TeacherCacheError, match='epoch 1 was not written'):
        _reader(root).begin_epoch(1, 2)
    # Writing the epoch again completes it and clears what the dead writer left.
    _write(root, [1], [[0, 1]])
    assert os.listdir(osp.join(root, 'epoch_0001')) == ['shard_00000_of_00001']
    _reader(root).begin_epoch(1, 2)
    # A shard deleted after its epoch was recorded is caught too.
    os.remove(osp.join(root, 'epoch_0000', 'shard_00000_of_00001', 'shard.json'))
    with pytest.raises(TeacherCacheError, match='missing or incomplete'):
        _reader(root).begin_epoch(0, 2)


def test_folders_that_are_not_caches_are_refused(tmp_path):
    with pytest.raises(TeacherCacheError, match='does not exist'):
        _reader(str(tmp_path / 'nothing'))
    (tmp_path / 'plain').mkdir()
    (tmp_path / 'plain' / 'notes.txt').write_text('x')
    with pytest.raises(TeacherCacheError, match='is not a teacher cache'):
        _reader(str(tmp_path / 'plain'))
    with pytest.raises(TeacherCacheError, match='non-empty folder that is not a teacher cache'):
        TeacherOutputCache(str(tmp_path / 'plain'), 'write').open(FINGERPRINT, TAPS)
    assert os.listdir(tmp_path / 'plain') == ['notes.txt']  # no lock file left in it
    (tmp_path / 'other').mkdir()
    (tmp_path / 'other' / 'manifest.json').write_text('{"format": "something else"}')
    with pytest.raises(TeacherCacheError, match='not an mlkd teacher-cache manifest'):
        _reader(str(tmp_path / 'other'))


@pytest.mark.parametrize(
    'cfg, message',
    [
        (dict(dir='x', mode='append'), "mode must be 'write' or 'read', got 'append'"),
        (dict(dir=None, mode='read'), 'needs model.teacher_cache.dir'),
        (dict(dir='x', mode='read', dtype='int8'), 'dtype must be one of'),
        (dict(dir='x', mode='read', path='y'), r"unknown key\(s\) \['path'\]"),
    ],
)
def test_bad_configs_are_refused(cfg, message):
    with pytest.raises(TeacherCacheError, match=message):
        TeacherOutputCache.from_config(cfg)


def test_disabled_config_gives_no_cache():
    assert TeacherOutputCache.from_config(None) is None
    assert TeacherOutputCache.from_config(dict(dir=None, mode=None, dtype='float32')) is None


def test_a_write_that_would_not_fit_the_disk_is_refused(tmp_path, monkeypatch):
    cache = TeacherOutputCache(str(tmp_path / 'cache'), 'write')
    cache.open(FINGERPRINT, TAPS)
    cache.begin_epoch(0, rows=1000, epochs_ahead=10)
    usage = namedtuple('usage', 'total used free')
    # One row: 8 index bytes + 5 + 12 float32 values = 76 bytes; 10 epochs of 1000 rows: 760 kB.
    monkeypatch.setattr(tc.shutil, 'disk_usage', lambda path: usage(10**6, 0, 759_999))
    with pytest.raises(TeacherCacheError, match='only 0.00 GiB are free'):
        cache.store(torch.tensor([0]), _outputs(torch.tensor([0])))
    monkeypatch.setattr(tc.shutil, 'disk_usage', lambda path: usage(10**6, 0, 760_000))
    cache.store(torch.tensor([0]), _outputs(torch.tensor([0])))


def test_a_sample_stored_twice_in_an_epoch_keeps_one_row(tmp_path):
    """A batch run twice (LossDiagnosticsHook's extra forward) or a repeated index."""
    cache = TeacherOutputCache(str(tmp_path / 'cache'), 'write')
    cache.open(FINGERPRINT, TAPS)
    cache.begin_epoch(0, 4)
    for batch in ([3, 1], [3, 1], [1, 0, 0]):
        cache.store(torch.tensor(batch), _outputs(torch.tensor(batch)))
    cache.end_epoch()
    shard = osp.join(str(tmp_path / 'cache'), 'epoch_0000', 'shard_00000_of_00001')
    assert np.fromfile(osp.join(shard, 'index.bin'), '<i8').tolist() == [3, 1, 0]
    reader = _reader(str(tmp_path / 'cache'))
    reader.begin_epoch(0, 3)
    got = reader.load(torch.tensor([0, 1, 3]), 'cpu')['t_stage3']
    assert torch.equal(got, _outputs(torch.tensor([0, 1, 3]))['t_stage3'])


def test_raw_files_are_plain_little_endian_arrays(tmp_path):
    """The layout is documented: anyone can read a shard with numpy alone."""
    root = str(tmp_path / 'cache')
    _write(root, [0], [[4, 2]])
    shard = osp.join(root, 'epoch_0000', 'shard_00000_of_00001')
    assert np.fromfile(osp.join(shard, 'index.bin'), '<i8').tolist() == [4, 2]
    logits = np.fromfile(osp.join(shard, 't_logits.bin'), '<f4').reshape(2, 5)
    assert np.array_equal(logits, _outputs(torch.tensor([4, 2]))['t_logits'].numpy())


def _write_own_epochs(number, root, epochs_of_writer, start):
    """One of several independent writer processes (no DDP): opens the cache when all are ready,
    then writes its own epochs of it."""
    cache = TeacherOutputCache(root, 'write')
    start.wait(timeout=120)  # every writer opens the new folder at the same moment
    cache.open(FINGERPRINT, TAPS)
    indices = torch.tensor([3, 0, 2, 1])
    for epoch in epochs_of_writer[number]:
        cache.begin_epoch(epoch, len(indices))
        for part in indices.split(3):
            cache.store(part, _outputs(part, epoch))
        cache.end_epoch()
    cache.close()


def test_processes_writing_disjoint_epochs_of_one_new_cache_at_once_keep_every_epoch(tmp_path):
    root = str(tmp_path / 'cache')
    # Forked, as the other multi-process tests: a spawned process would import mlkd (~5 s).
    start = mp.get_context('fork').Barrier(2)
    mp.start_processes(
        _write_own_epochs,
        args=(root, [[0, 2], [1, 3]], start),
        nprocs=2,
        join=True,
        start_method='fork',
    )
    manifest = json.load(open(osp.join(root, 'manifest.json')))
    assert manifest['epochs'] == {str(e): {'rows': 4, 'world_size': 1} for e in range(4)}
    cache = _reader(root)
    for epoch in range(4):
        cache.begin_epoch(epoch, 4)
        wanted = torch.tensor([1, 3, 0, 2])
        got = cache.load(wanted, 'cpu')
        for name, value in _outputs(wanted, epoch).items():
            assert torch.equal(got[name], value), (epoch, name)
        cache.end_epoch()


def _race(monkeypatch, locked, first, second):
    """Run ``first`` in a thread and pause it inside its manifest write (the new file written,
    not yet moved into place) until ``second``, run in this thread, has reached the manifest:
    blocked on the lock (``locked``), or done (the lock removed). Returns what ``second``
    raised (``None`` if nothing)."""
    paused, second_arrived, errors = threading.Event(), threading.Event(), []
    manifest_writes, real_lock = atomic.atomic_write, tc.manifest_lock

    @contextlib.contextmanager
    def pausing_write(path):
        with manifest_writes(path) as file:
            yield file
            if threading.current_thread() is thread and osp.basename(path) == MANIFEST:
                paused.set()
                assert second_arrived.wait(30), 'the second writer never reached the manifest'

    @contextlib.contextmanager
    def lock_noting_second(folder):
        if threading.current_thread() is not thread:
            second_arrived.set()  # ... and blocks in the real lock until the first writer is done
        with real_lock(folder) if locked else contextlib.nullcontext():
            yield

    def run_first():
        try:
            first()
        except BaseException as error:  # noqa: B036 -- handed to the test's thread
            errors.append(error)
            paused.set()

    monkeypatch.setattr(atomic, 'atomic_write', pausing_write)
    monkeypatch.setattr(tc, 'manifest_lock', lock_noting_second)
    thread = threading.Thread(target=run_first)
    thread.start()
    assert paused.wait(30), 'the first writer never wrote the manifest'
    raised = None
    try:
        second()
    except TeacherCacheError as error:
        raised = error
    finally:
        second_arrived.set()
        thread.join(30)
    if errors:
        raise errors[0]
    return raised


@pytest.mark.parametrize('locked', [True, False], ids=['locked', 'without_lock'])
def test_two_writers_recording_epochs_at_once_keep_both(tmp_path, monkeypatch, locked):
    """Each writer re-reads the manifest under the lock before adding its epoch; without the
    lock (checked here, so that the forced interleaving is known to matter) one epoch is lost."""
    root = str(tmp_path / 'cache')
    writers = [TeacherOutputCache(root, 'write') for _ in range(2)]
    for epoch, writer in enumerate(writers):
        writer.open(FINGERPRINT, TAPS)
        writer.begin_epoch(epoch, 2)
        writer.store(torch.tensor([1, 0]), _outputs(torch.tensor([1, 0]), epoch))
    assert _race(monkeypatch, locked, writers[0].end_epoch, writers[1].end_epoch) is None
    written = written_epochs(root)
    if not locked:
        assert len(written) == 1  # the lost update the lock prevents
        return
    assert written == [0, 1]
    assert writers[1].epochs_written == [0, 1]  # the later writer's manifest holds both
    cache = _reader(root)
    for epoch in (0, 1):
        cache.begin_epoch(epoch, 2)
        assert torch.equal(
            cache.load(torch.tensor([0]), 'cpu')['t_logits'],
            _outputs(torch.tensor([0]), epoch)['t_logits'],
        )


@pytest.mark.parametrize('locked', [True, False], ids=['locked', 'without_lock'])
def test_two_writers_creating_one_cache_at_once_share_it(tmp_path, monkeypatch, locked):
    """The second writer looks at the folder while the first is creating the manifest: under the
    lock it finds the finished manifest; without it, the first one's unfinished file, and takes
    the folder for a foreign one."""
    root = str(tmp_path / 'cache')
    writers = [TeacherOutputCache(root, 'write') for _ in range(2)]
    raised = _race(monkeypatch, locked, *(lambda w=w: w.open(FINGERPRINT, TAPS) for w in writers))
    if not locked:
        assert 'non-empty folder that is not a teacher cache' in str(raised)
        return
    assert raised is None
    assert writers[0].manifest == writers[1].manifest
    assert writers[1].manifest['fingerprint'] == FINGERPRINT
    # The lock file is the cache's own: the folder is not taken for a foreign one afterwards.
    assert sorted(os.listdir(root)) == [LOCK_FILE, MANIFEST]
    TeacherOutputCache(root, 'write').open(FINGERPRINT, TAPS)


def test_a_cache_copied_without_its_lock_file_is_still_extended(tmp_path):
    root = str(tmp_path / 'cache')
    _write(root, [0], [[0, 1]])
    os.remove(osp.join(root, '.manifest.lock'))
    TeacherOutputCache(root, 'write').open(FINGERPRINT, TAPS)


def test_a_tap_cached_from_another_module_is_refused(tmp_path):
    """A tap re-pointed to another module of the same shape gives other outputs under one name:
    the writer records where each tap was taken, a reader or writer of another module is
    refused; one that does not say (or a cache written before paths were recorded) is not."""
    root = str(tmp_path / 'cache')
    paths = {'t_logits': 'head', 't_stage3': 'backbone.layer3'}
    writer = TeacherOutputCache(root, 'write')
    writer.open(FINGERPRINT, TAPS, paths)
    writer.begin_epoch(0, 2)
    writer.store(torch.tensor([0, 1]), _outputs(torch.tensor([0, 1])))
    writer.end_epoch()
    assert json.load(open(osp.join(root, MANIFEST)))['tap_paths'] == paths
    TeacherOutputCache(root, 'read').open(FINGERPRINT, TAPS, paths)
    TeacherOutputCache(root, 'read').open(FINGERPRINT, TAPS)
    moved = dict(paths, t_stage3='backbone.layer3.1.conv2')
    for mode in ('read', 'write'):
        with pytest.raises(
            TeacherCacheError,
            match=r"tap t_stage3 was cached from the teacher module 'backbone.layer3', this run "
            r"records it at 'backbone.layer3.1.conv2'",
        ):
            TeacherOutputCache(root, mode).open(FINGERPRINT, TAPS, moved)


def test_a_cache_of_an_earlier_format_version_is_refused_naming_it(tmp_path):
    root = str(tmp_path / 'cache')
    _write(root, [0], [[0, 1]])
    path = osp.join(root, MANIFEST)
    manifest = json.load(open(path))
    manifest['version'] = 1
    with open(path, 'w') as file:
        json.dump(manifest, file)
    for mode in ('read', 'write'):
        with pytest.raises(TeacherCacheError, match='written in format version 1 .another mlkd'):
            TeacherOutputCache(root, mode).open(FINGERPRINT, TAPS)
