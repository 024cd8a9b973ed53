"""An exact on-disk cache of a frozen teacher's outputs, keyed by (seed, epoch, sample index).

Distillation recomputes the frozen teacher's forward pass on every step. When the augmentation of
sample ``i`` in epoch ``e`` is a pure function of ``(seed, e, i)`` — which
:class:`~mlkd.datasets.EpochKeyedSampler` guarantees for every per-sample pipeline (see
:mod:`mlkd.utils.sample_seed`) — the teacher's outputs for that sample are too, so they can be
computed once (``mode='write'``, or ``tools/cache_teacher.py``) and read back by any number of
student runs (``mode='read'``): a student trained from the cache is bit-identical to one trained
with the live teacher, as long as the cache stores the outputs in the precision the teacher
produced them (``dtype='float32'``, the default; ``float16`` / ``bfloat16`` halve the size and
round the targets).

Layout of a cache folder::

    manifest.json                      what the cache was made from (see below)
    .manifest.lock                     locked around each manifest update (see below)
    epoch_0000/shard_00000_of_00002/   one shard per writing process and epoch
        index.bin                      int64 [rows]: dataset index of each row
        t_logits.bin                   <dtype> [rows, *shape] raw little-endian arrays
        t_stage3.bin                   ... one file per cached teacher tap
        shard.json                     rows and per-tap shapes; written last
    epoch_0001/...

The manifest holds the ``fingerprint`` (sha256 of the teacher's loaded weights, sha256 of the
training dataset's config, pipeline included, and of its sample list, the sampler's seed, the
teacher's forward precision and memory format), the storage ``dtype``, the ``taps`` with their
per-sample shape and the dtype the teacher produced them in, and the ``epochs`` written
completely with the number of shards of each. Reading compares every fingerprint field and refuses
a mismatch with a :class:`TeacherCacheError` naming it: a student never trains on another
teacher's, pipeline's or seed's targets, and never silently falls back to the live teacher.

Writes are atomic per shard: a process appends its rows to files in a temporary folder and renames
the folder into place (``os.replace``) when its epoch ends; rank 0 then records the epoch in the
manifest (itself replaced atomically) once every rank's shard exists. A crash leaves either no
shard or a temporary folder, and the epoch is missing from the manifest: reading it is refused.
Under DDP each rank writes its own shard; reading looks rows up by sample index in all shards of
the epoch, so any number of processes can read a cache written by any other number.

Several independent processes may write **disjoint epochs** of one cache folder at the same time
(``tools/demo.py`` fills a seed's epochs in shards side by side): every read-modify-write of the
manifest (creating or checking it in :meth:`TeacherOutputCache.open`, recording an epoch in
:meth:`TeacherOutputCache.end_epoch`) holds an exclusive ``fcntl.flock`` on ``.manifest.lock`` in
the folder and re-reads the manifest from disk, so no writer loses another's epochs and no writer
takes another's half-created cache for a foreign folder. Two processes writing the *same* epoch at
once are not supported (the later one removes the other's unfinished shard). Where ``fcntl`` is
missing (Windows) there is no lock: only one writer process (or the ranks of one DDP run) per
cache. The lock is host-local: writers on several hosts sharing the folder over a network file
system are not supported.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import os
import os.path as osp
import shutil
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import torch
from mmengine.dist import barrier, get_rank, get_world_size

from mlkd.utils.atomic import atomic_write

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; one writer process per cache (module doc)
    fcntl = None

__all__ = [
    'CACHE_DTYPES',
    'CACHE_MODES',
    'TeacherCacheError',
    'TeacherOutputCache',
    'check_no_batch_augments',
    'dataset_sha256',
    'keyed_sampling_seed',
    'run_fingerprint',
    'teacher_precision',
    'teacher_weights_sha256',
    'train_sampler',
    'written_epochs',
]

#: ``mode`` values: fill the cache while the live teacher runs, or replace the teacher by it.
CACHE_MODES = ('write', 'read')
#: Storage dtypes: name -> (numpy dtype on disk, torch dtype of the stored values). numpy has no
#: bfloat16, so bfloat16 values are stored as their raw 16 bits.
CACHE_DTYPES = {
    'float32': (np.float32, torch.float32),
    'float16': (np.float16, torch.float16),
    'bfloat16': (np.uint16, torch.bfloat16),
}
MANIFEST = 'manifest.json'
#: Held (``fcntl.flock``) around every read-modify-write of the manifest; not part of the cache.
LOCK_FILE = '.manifest.lock'
SHARD_META = 'shard.json'
INDEX_FILE = 'index.bin'
FORMAT = 'mlkd-teacher-cache'
VERSION = 1


class TeacherCacheError(ValueError):
    """A teacher cache that cannot be used as asked (names the field, file or value at fault)."""


def teacher_weights_sha256(network: torch.nn.Module) -> str:
    """sha256 of a network's state dict (names, dtypes, shapes and bytes, in order).

    Hashing the loaded weights rather than the checkpoint file identifies the teacher however it
    was stored (a work dir, an mmpretrain or a distiller checkpoint).
    """
    digest = hashlib.sha256()
    for name, value in network.state_dict().items():
        value = value.detach().cpu().contiguous()
        digest.update(f'{name}|{value.dtype}|{tuple(value.shape)}|'.encode())
        digest.update(value.reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def dataset_sha256(dataset_cfg: Mapping | None, dataset: Any) -> str:
    """sha256 of a training dataset's config (pipeline included), length and sample list.

    The sample list is each sample's file path (``img_path``) where the dataset has one: a dataset
    config that reads a changed annotation file is then told apart. In-memory datasets
    (MultiDigits) are determined by their config.
    """
    digest = hashlib.sha256()
    cfg = dataset_cfg.to_dict() if hasattr(dataset_cfg, 'to_dict') else dataset_cfg
    digest.update(json.dumps(cfg, sort_keys=True, default=repr).encode())
    digest.update(f'|{len(dataset)}|'.encode())
    data_list = getattr(dataset, 'data_list', None)
    if isinstance(data_list, list):
        paths = [info.get('img_path') for info in data_list if isinstance(info, dict)]
        if any(paths):
            digest.update('\n'.join(map(str, paths)).encode())
    return digest.hexdigest()


def train_sampler(loader: Any) -> Any:
    """The sampler of a data loader (inside its batch sampler where it has one)."""
    return getattr(getattr(loader, 'batch_sampler', None), 'sampler', None) or loader.sampler


def keyed_sampling_seed(loader: Any) -> int:
    """The seed of ``loader``'s augmentations, after checking that they are keyed by
    (seed, epoch, index): an :class:`~mlkd.datasets.EpochKeyedSampler`, a dataset whose fetch is
    keyed (every mmengine dataset, :mod:`mlkd.utils.compat`), and no batch augmentation in the
    data preprocessor (those draw from the training's own stream, per batch).

    Raises:
        TeacherCacheError: naming what breaks the condition.
    """
    from mlkd.datasets.samplers import EpochKeyedSampler

    sampler = train_sampler(loader)
    if not isinstance(sampler, EpochKeyedSampler):
        raise TeacherCacheError(
            f'teacher cache: train_dataloader.sampler is {type(sampler).__name__}; a cache is '
            'exact only when each augmentation is a function of (seed, epoch, sample index): add '
            '--cfg-options train_dataloader.sampler.type=EpochKeyedSampler'
        )
    getitem = type(loader.dataset).__getitem__
    if not getattr(getitem, 'keyed', False):
        raise TeacherCacheError(
            f'teacher cache: the training dataset {type(loader.dataset).__name__} does not fetch '
            'samples under their (seed, epoch, index) random state (it is not an mmengine '
            'dataset); its augmentations cannot be cached exactly'
        )
    return int(sampler.seed)


def check_no_batch_augments(preprocessor: Any) -> None:
    """Refuse a data preprocessor with batch augmentations (Mixup, CutMix): they mix samples with
    numbers drawn per batch, so the teacher's outputs of a sample are not a function of its key."""
    if getattr(preprocessor, 'batch_augments', None):
        raise TeacherCacheError(
            'teacher cache: the data preprocessor has batch_augments; they mix samples per batch, '
            "so a sample's teacher outputs are not a function of (seed, epoch, index). Remove "
            'them or train without a cache'
        )


def teacher_precision(optim_wrapper: Any = None, amp_dtype: torch.dtype | None = None) -> str:
    """``'float32'``, or ``'autocast-<dtype>'`` when the teacher runs under autocast (an
    ``AmpOptimWrapper`` such as ``MixedPrecisionOptimWrapper``, or ``amp_dtype`` given)."""
    if amp_dtype is None and optim_wrapper is not None:
        from mmengine.optim import AmpOptimWrapper

        if isinstance(optim_wrapper, AmpOptimWrapper):
            amp_dtype = getattr(optim_wrapper, 'cast_dtype', None) or torch.float16
    return 'float32' if amp_dtype is None else f'autocast-{str(amp_dtype).replace("torch.", "")}'


def run_fingerprint(
    distiller: Any,
    loader: Any,
    dataset_cfg: Mapping | None,
    precision: str,
    channels_last: bool = False,
) -> dict[str, Any]:
    """What a distiller's teacher outputs depend on, for the manifest (checks the keying too).

    Args:
        distiller: the :class:`SingleTeacherDistiller` (its teacher, views and preprocessor).
        loader: the training data loader (sampler, dataset).
        dataset_cfg: the config the training dataset was built from (pipeline included).
        precision: :func:`teacher_precision` of the teacher forward.
        channels_last: whether the teacher was made to run on channels-last inputs (other
            kernels, other rounding: a cache written so is refused by a run whose teacher does
            not). A data preprocessor with ``channels_last=True`` hands every network such
            inputs, so it counts too.
    """
    seed = keyed_sampling_seed(loader)
    check_no_batch_augments(distiller.data_preprocessor)
    return dict(
        teacher_weights_sha256=teacher_weights_sha256(distiller.teacher),
        dataset_sha256=dataset_sha256(dataset_cfg, loader.dataset),
        seed=seed,
        teacher_view=(distiller.views or {}).get('teacher'),
        teacher_precision=precision,
        teacher_channels_last=bool(
            channels_last or getattr(distiller.data_preprocessor, 'channels_last', False)
        ),
    )


def written_epochs(folder: str) -> list[int]:
    """The epochs a cache folder holds completely (``[]`` for a folder without a manifest)."""
    path = osp.join(folder, MANIFEST)
    if not osp.isfile(path):
        return []
    return sorted(int(e) for e in _read_json(path, 'manifest').get('epochs', {}))


def _shard_name(rank: int, world_size: int) -> str:
    return f'shard_{rank:05d}_of_{world_size:05d}'


def _epoch_dir(root: str, epoch: int) -> str:
    return osp.join(root, f'epoch_{epoch:04d}')


def _read_json(path: str, what: str) -> dict:
    try:
        with open(path, encoding='utf-8') as f:
            return json.load(f)
    except json.JSONDecodeError as error:
        raise TeacherCacheError(
            f'teacher cache: {what} {path} is not valid JSON ({error})'
        ) from None


def _write_json(path: str, content: dict) -> None:
    with atomic_write(path) as f:
        f.write(json.dumps(content, indent=1, sort_keys=True).encode())


class _ShardWriter:
    """Appends one process's rows of one epoch to raw files in a temporary folder."""

    def __init__(self, final_dir: str, storage: np.dtype, torch_dtype: torch.dtype) -> None:
        self.final_dir = final_dir
        self.temp_dir = osp.join(
            osp.dirname(final_dir), f'.{osp.basename(final_dir)}.{uuid.uuid4().hex[:12]}.tmp'
        )
        os.makedirs(self.temp_dir)
        self.storage, self.torch_dtype = storage, torch_dtype
        self.files: dict[str, Any] = {}
        self.taps: dict[str, dict] = {}
        self.rows = 0
        self.written = np.zeros(0, dtype=bool)  # by dataset index

    def append(self, indices: np.ndarray, outputs: Mapping[str, torch.Tensor]) -> None:
        # A sample already stored this epoch (a batch run twice, e.g. by LossDiagnosticsHook's
        # extra forward; a round_up repeat) has the same outputs: store its first row only.
        if len(indices) and indices.max() >= len(self.written):
            self.written = np.concatenate(
                [self.written, np.zeros(indices.max() + 1 - len(self.written), dtype=bool)]
            )
        first = np.zeros(len(indices), dtype=bool)
        first[np.unique(indices, return_index=True)[1]] = True
        new = first & ~self.written[indices]
        if not new.all():
            keep = torch.from_numpy(new)
            indices = indices[new]
            outputs = {name: value[keep.to(value.device)] for name, value in outputs.items()}
        self.written[indices] = True
        if not self.files:
            self.files[INDEX_FILE] = open(osp.join(self.temp_dir, INDEX_FILE), 'wb')
            for name, value in outputs.items():
                self.taps[name] = dict(
                    shape=list(value.shape[1:]), dtype=str(value.dtype).replace('torch.', '')
                )
                self.files[name] = open(osp.join(self.temp_dir, f'{name}.bin'), 'wb')
        elif set(outputs) != set(self.taps):
            raise TeacherCacheError(
                f'teacher cache: taps changed within an epoch: '
                f'{sorted(outputs)} after {sorted(self.taps)}'
            )
        self.files[INDEX_FILE].write(indices.astype('<i8').tobytes())
        for name, value in outputs.items():
            shape = list(value.shape[1:])
            if shape != self.taps[name]['shape']:
                raise TeacherCacheError(
                    f'teacher cache: tap {name!r} has per-sample shape '
                    f'{shape}, earlier {self.taps[name]["shape"]}'
                )
            stored = value.detach().to(self.torch_dtype)
            if self.torch_dtype == torch.bfloat16:
                stored = stored.view(torch.int16)
            self.files[name].write(stored.cpu().contiguous().numpy().tobytes())
        self.rows += len(indices)

    def commit(self) -> None:
        """Close the files, write ``shard.json`` and move the folder into place."""
        for file in self.files.values():
            file.flush()
            os.fsync(file.fileno())
            file.close()
        _write_json(osp.join(self.temp_dir, SHARD_META), dict(rows=self.rows, taps=self.taps))
        if osp.isdir(self.final_dir):  # an epoch written again (e.g. after a crash): replace it
            old = f'{self.temp_dir}.old'
            os.replace(self.final_dir, old)
            os.replace(self.temp_dir, self.final_dir)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(self.temp_dir, self.final_dir)

    def discard(self) -> None:
        for file in self.files.values():
            file.close()
        shutil.rmtree(self.temp_dir, ignore_errors=True)


class _EpochReader:
    """Memory-mapped rows of every shard of one epoch, looked up by dataset index."""

    def __init__(
        self,
        root: str,
        epoch: int,
        world_size: int,
        manifest_taps: Mapping[str, dict],
        wanted: list[str],
        storage: np.dtype,
    ) -> None:
        folder = _epoch_dir(root, epoch)
        self.shards: list[dict[str, np.ndarray]] = []
        indices = []
        for rank in range(world_size):
            shard = osp.join(folder, _shard_name(rank, world_size))
            meta_path = osp.join(shard, SHARD_META)
            if not osp.isfile(meta_path):
                raise TeacherCacheError(
                    f'teacher cache: epoch {epoch} is recorded as written but '
                    f'its shard {shard} is missing or incomplete'
                )
            meta = _read_json(meta_path, 'shard file')
            rows = int(meta['rows'])
            arrays = {INDEX_FILE: self._map(osp.join(shard, INDEX_FILE), np.dtype('<i8'), rows, [])}
            for name in wanted:
                shape = manifest_taps[name]['shape']
                if meta['taps'].get(name, {}).get('shape') != shape:
                    raise TeacherCacheError(
                        f'teacher cache: shard {shard} lacks tap {name!r} of shape {shape}'
                    )
                arrays[name] = self._map(
                    osp.join(shard, f'{name}.bin'), np.dtype(storage), rows, shape
                )
            indices.append(arrays[INDEX_FILE])
            self.shards.append(arrays)
        size = max((int(i.max()) + 1 for i in indices if len(i)), default=0)
        # Row lookup tables: a sample written by several ranks (round_up repeats) has the same
        # augmentation, hence the same outputs, in each; the last shard wins.
        self.shard_of = np.full(size, -1, dtype=np.int64)
        self.row_of = np.zeros(size, dtype=np.int64)
        for number, index in enumerate(indices):
            self.shard_of[index] = number
            self.row_of[index] = np.arange(len(index))
        self.epoch, self.wanted = epoch, wanted

    @staticmethod
    def _map(path: str, dtype: np.dtype, rows: int, shape: list[int]) -> np.ndarray:
        expected = rows * int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        actual = osp.getsize(path) if osp.isfile(path) else None
        if actual != expected:
            raise TeacherCacheError(
                f'teacher cache: {path} is truncated or damaged: '
                f'{actual} bytes, expected {expected} ({rows} rows of '
                f'{shape} {dtype})'
            )
        if rows == 0:
            return np.zeros((0, *shape), dtype=dtype)
        return np.memmap(path, dtype=dtype, mode='r', shape=(rows, *shape))

    def rows(self, indices: np.ndarray) -> dict[str, np.ndarray]:
        known = (indices >= 0) & (indices < len(self.shard_of))
        shard = np.where(
            known, self.shard_of[np.clip(indices, 0, max(len(self.shard_of) - 1, 0))], -1
        )
        if (shard < 0).any():
            missing = indices[shard < 0][:10].tolist()
            raise TeacherCacheError(
                f'teacher cache: epoch {self.epoch} has no row for sample '
                f'index(es) {missing} (was it written with another dataset?)'
            )
        rows = self.row_of[indices]
        out = {}
        for name in self.wanted:
            first = self.shards[0][name]
            values = np.empty((len(indices), *first.shape[1:]), dtype=first.dtype)
            for number in np.unique(shard):  # a loop over shards, not samples
                mask = shard == number
                values[mask] = self.shards[number][name][rows[mask]]
            out[name] = values
        return out


class TeacherOutputCache:
    """Stores or serves a frozen teacher's outputs per (epoch, sample index); see the module doc.

    The distiller owns one (``model.teacher_cache = dict(dir=..., mode=..., dtype=...)``);
    :class:`~mlkd.engine.hooks.TeacherCacheHook` (or ``tools/cache_teacher.py``) opens it with the
    run's fingerprint and brackets every epoch with :meth:`begin_epoch` / :meth:`end_epoch`.

    Args:
        dir: the cache folder.
        mode: ``'write'`` (run the teacher, store its outputs) or ``'read'`` (serve them).
        dtype: storage dtype, ``'float32'`` (exact), ``'float16'`` or ``'bfloat16'`` (half the
            bytes; targets rounded).
    """

    def __init__(self, dir: str, mode: str, dtype: str = 'float32') -> None:
        if mode not in CACHE_MODES:
            raise TeacherCacheError(
                f"model.teacher_cache.mode must be 'write' or 'read', got {mode!r}"
            )
        if dtype not in CACHE_DTYPES:
            raise TeacherCacheError(
                f'model.teacher_cache.dtype must be one of {sorted(CACHE_DTYPES)}, got {dtype!r}'
            )
        if not isinstance(dir, (str, os.PathLike)) or not str(dir):
            raise TeacherCacheError(f'model.teacher_cache.dir must be a folder path, got {dir!r}')
        self.dir, self.mode, self.dtype = os.fspath(dir), mode, dtype
        self.storage, self.torch_dtype = CACHE_DTYPES[dtype]
        self.manifest: dict | None = None
        self.epoch: int | None = None
        self._writer: _ShardWriter | None = None
        self._reader: _EpochReader | None = None
        self._rank, self._world_size = 0, 1
        self._space_checked = False
        self._rows_expected = 0

    @classmethod
    def from_config(cls, cfg: Mapping | None) -> TeacherOutputCache | None:
        """``None`` when ``cfg`` is ``None`` or leaves both ``dir`` and ``mode`` unset."""
        if cfg is None:
            return None
        cfg = dict(cfg)
        unknown = set(cfg) - {'dir', 'mode', 'dtype'}
        if unknown:
            raise TeacherCacheError(
                f'model.teacher_cache has unknown key(s) {sorted(unknown)}; '
                "known: 'dir', 'mode', 'dtype'"
            )
        if cfg.get('dir') is None and cfg.get('mode') is None:
            return None
        if cfg.get('dir') is None:
            raise TeacherCacheError(
                f'model.teacher_cache.mode={cfg.get("mode")!r} needs '
                'model.teacher_cache.dir (the cache folder)'
            )
        return cls(cfg['dir'], cfg.get('mode'), cfg.get('dtype', 'float32'))

    def __repr__(self) -> str:
        return f'TeacherOutputCache(dir={self.dir!r}, mode={self.mode!r}, dtype={self.dtype!r})'

    # ----------------------------------------------------------------- session
    @property
    def manifest_path(self) -> str:
        return osp.join(self.dir, MANIFEST)

    def open(self, fingerprint: Mapping[str, Any], taps: list[str]) -> None:
        """Check (read) or create / check (write) the manifest against the run's ``fingerprint``.

        Args:
            fingerprint: what the outputs depend on (see the module doc); every field must match.
            taps: the teacher taps the run's losses read (``t_logits``, ``t_stage3``...).
        """
        self._rank, self._world_size = get_rank(), get_world_size()
        fingerprint = json.loads(json.dumps(dict(fingerprint)))  # tuples -> lists, as stored
        if self.mode == 'write':
            manifest = self._create_or_check_manifest(fingerprint)
        else:
            manifest = self._checked_manifest(fingerprint)
            if manifest is None:
                what = (
                    'does not exist'
                    if not osp.exists(self.dir)
                    else f'is not a teacher cache (no {MANIFEST})'
                )
                raise TeacherCacheError(
                    f'teacher cache: {self.dir} {what}; fill it first with '
                    "mode='write' or tools/cache_teacher.py"
                )
            missing = [t for t in taps if t not in manifest['taps']]
            if missing:
                raise TeacherCacheError(
                    f'teacher cache {self.dir}: taps differ: the losses read '
                    f'{missing}, the cache holds {sorted(manifest["taps"])}'
                )
        self.taps = list(taps)
        self.manifest = manifest

    def _create_or_check_manifest(self, fingerprint: dict) -> dict:
        """The manifest of a cache opened for writing: checked if it exists, else created by rank
        0 in an empty folder; under the folder's lock, so that of several processes opening a
        new cache at once one creates it and the others check it."""
        os.makedirs(self.dir, exist_ok=True)
        with self._manifest_lock():
            manifest = self._checked_manifest(fingerprint)
            if manifest is None:
                self._refuse_foreign_folder()
        barrier()  # every rank has looked at the folder before rank 0 fills it
        if manifest is None and self._rank == 0:
            with self._manifest_lock():  # another process may have created it meanwhile
                manifest = self._checked_manifest(fingerprint)
                if manifest is None:
                    self._refuse_foreign_folder()
                    manifest = dict(
                        format=FORMAT,
                        version=VERSION,
                        fingerprint=fingerprint,
                        dtype=self.dtype,
                        taps={},
                        epochs={},
                    )
                    _write_json(self.manifest_path, manifest)
        barrier()
        if manifest is None:  # a rank that looked before rank 0 created it
            manifest = self._checked_manifest(fingerprint)
        return manifest

    def _checked_manifest(self, fingerprint: Mapping[str, Any]) -> dict | None:
        """The manifest on disk after checking that it is this run's cache (format, every
        fingerprint field, storage dtype); ``None`` when the folder has none."""
        if not osp.isfile(self.manifest_path):
            return None
        manifest = _read_json(self.manifest_path, 'manifest')
        if manifest.get('format') != FORMAT:
            raise TeacherCacheError(
                f'teacher cache: {self.manifest_path} is not an mlkd teacher-cache manifest'
            )
        self._check_fingerprint(manifest, fingerprint)
        if manifest.get('dtype') != self.dtype:
            raise TeacherCacheError(
                f'teacher cache {self.dir}: dtype differs: the cache stores '
                f'{manifest.get("dtype")!r}, model.teacher_cache.dtype is {self.dtype!r}'
            )
        return manifest

    def _refuse_foreign_folder(self) -> None:
        if any(name != LOCK_FILE for name in os.listdir(self.dir)):
            raise TeacherCacheError(
                f'teacher cache: {self.dir} is a non-empty folder that is '
                f'not a teacher cache (no {MANIFEST}); choose an empty '
                'or new folder'
            )

    @contextlib.contextmanager
    def _manifest_lock(self) -> Iterator[None]:
        """Hold the cache folder's exclusive lock (:data:`LOCK_FILE`) for the block; a no-op
        without ``fcntl`` (module doc)."""
        if fcntl is None:
            yield
            return
        with open(osp.join(self.dir, LOCK_FILE), 'a') as handle:  # closing it releases the lock
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            yield

    def _check_fingerprint(self, manifest: Mapping, fingerprint: Mapping) -> None:
        stored = manifest.get('fingerprint', {})
        for field in sorted(set(stored) | set(fingerprint)):
            if stored.get(field) != fingerprint.get(field):
                raise TeacherCacheError(
                    f'teacher cache {self.dir}: {field} differs: the cache was written with '
                    f'{stored.get(field)!r}, this run has {fingerprint.get(field)!r}; '
                    'refusing to train on targets of another setting'
                )

    @property
    def epochs_written(self) -> list[int]:
        return sorted(int(e) for e in (self.manifest or {}).get('epochs', {}))

    def begin_epoch(self, epoch: int, rows: int, epochs_ahead: int = 1) -> None:
        """Start writing or reading ``epoch``; ``rows`` is this process's sample count in it
        (for the free-space check of ``rows`` x ``epochs_ahead`` rows before the first write)."""
        if self.manifest is None:
            raise TeacherCacheError(
                'teacher cache used before open(): add TeacherCacheHook to '
                'custom_hooks (the shipped distillation configs have it)'
            )
        self.epoch = int(epoch)
        if self.mode == 'read':
            if self.epoch not in self.epochs_written:
                raise TeacherCacheError(
                    f'teacher cache {self.dir}: epoch {self.epoch} was not '
                    f'written (epochs written: {self.epochs_written})'
                )
            self._reader = _EpochReader(
                self.dir,
                self.epoch,
                self.manifest['epochs'][str(self.epoch)]['world_size'],
                self.manifest['taps'],
                self.taps,
                self.storage,
            )
            return
        if self._writer is not None:
            self._writer.discard()
        folder = osp.join(
            _epoch_dir(self.dir, self.epoch), _shard_name(self._rank, self._world_size)
        )
        os.makedirs(osp.dirname(folder), exist_ok=True)
        # What an interrupted writer of this shard left behind is never read: remove it.
        for stale in glob.glob(osp.join(osp.dirname(folder), f'.{osp.basename(folder)}.*.tmp')):
            shutil.rmtree(stale, ignore_errors=True)
        self._writer = _ShardWriter(folder, self.storage, self.torch_dtype)
        self._rows_expected = int(rows) * max(int(epochs_ahead), 1)
        self._space_checked = False

    def store(self, sample_idx: torch.Tensor, outputs: Mapping[str, Any]) -> None:
        """Append the teacher's ``outputs`` (name -> ``[B, ...]`` tensor) of samples
        ``sample_idx`` (``[B]``) to this epoch's shard."""
        if self._writer is None:
            raise TeacherCacheError(
                'teacher cache: store() outside an epoch; add TeacherCacheHook to custom_hooks'
            )
        for name, value in outputs.items():
            if not isinstance(value, torch.Tensor) or value.shape[:1] != sample_idx.shape:
                raise TeacherCacheError(
                    f'teacher cache: tap {name!r} is not a [B, ...] tensor '
                    f'({type(value).__name__}); only tensor taps are cached'
                )
        if not self._space_checked:
            row_bytes = 8 + sum(
                int(np.prod(v.shape[1:], dtype=np.int64)) * np.dtype(self.storage).itemsize
                for v in outputs.values()
            )
            self.check_free_space(row_bytes * self._rows_expected)
            self._space_checked = True
        self._writer.append(sample_idx.cpu().numpy(), outputs)

    def check_free_space(self, needed: int) -> None:
        """Refuse a write of ``needed`` bytes that the cache's file system cannot hold."""
        free = shutil.disk_usage(self.dir).free
        if needed > free:
            raise TeacherCacheError(
                f'teacher cache: writing needs {needed / 2**30:.2f} GiB in '
                f'{self.dir}, but only {free / 2**30:.2f} GiB are free'
            )

    def load(self, sample_idx: torch.Tensor, device: torch.device | str) -> dict[str, torch.Tensor]:
        """The cached outputs of samples ``sample_idx`` (``[B]``) in the current epoch, on
        ``device``, in the dtype the teacher produced them in."""
        if self._reader is None:
            raise TeacherCacheError(
                'teacher cache: load() outside an epoch; add TeacherCacheHook to custom_hooks'
            )
        arrays = self._reader.rows(sample_idx.cpu().numpy())
        out = {}
        for name, array in arrays.items():
            value = torch.from_numpy(array)
            if self.torch_dtype == torch.bfloat16:
                value = value.view(torch.bfloat16)
            source = getattr(torch, self.manifest['taps'][name]['dtype'])
            out[name] = value.to(device, non_blocking=True).to(source)
        return out

    def end_epoch(self) -> None:
        """Commit this process's shard; rank 0 then records the epoch in the manifest on disk
        (under the folder's lock, keeping what other writer processes recorded meanwhile)."""
        if self.mode == 'read' or self._writer is None:
            self._reader = None
            return
        self._writer.commit()
        self._writer = None
        barrier()  # every rank's shard is in place
        if self._rank == 0:
            epoch_dir = _epoch_dir(self.dir, self.epoch)
            shards = [
                _read_json(
                    osp.join(epoch_dir, _shard_name(r, self._world_size), SHARD_META), 'shard file'
                )
                for r in range(self._world_size)
            ]
            with self._manifest_lock():
                # Other processes may have recorded their epochs since open(): add this one to
                # the manifest on disk, not to the copy read then.
                manifest = self._checked_manifest(self.manifest['fingerprint'])
                if manifest is None:
                    raise TeacherCacheError(
                        f'teacher cache: {self.manifest_path} disappeared '
                        f'while epoch {self.epoch} was being written'
                    )
                taps = dict(manifest.get('taps') or {})
                for shard in shards:
                    for name, spec in shard['taps'].items():
                        if taps.setdefault(name, spec) != spec:
                            raise TeacherCacheError(
                                f'teacher cache: tap {name!r} was '
                                f'{taps[name]} in earlier epochs, now {spec}'
                            )
                manifest['taps'] = taps
                manifest['epochs'][str(self.epoch)] = dict(
                    world_size=self._world_size, rows=sum(s['rows'] for s in shards)
                )
                _write_json(self.manifest_path, manifest)
            self.manifest = manifest
        barrier()
        if self._rank != 0:
            self.manifest = _read_json(self.manifest_path, 'manifest')

    def close(self) -> None:
        """Drop an unfinished shard (its temporary folder) and the memory maps."""
        if self._writer is not None:
            with contextlib.suppress(OSError):
                self._writer.discard()
        self._writer = self._reader = None
