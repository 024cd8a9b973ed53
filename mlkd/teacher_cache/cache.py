"""A cache session: open a cache folder against a run's fingerprint, then write or read epochs."""

from __future__ import annotations

import contextlib
import glob
import json
import os
import os.path as osp
import shutil
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from mmengine.dist import barrier, get_rank, get_world_size

from mlkd.utils.atomic import write_json_atomic

from .format import (
    CACHE_DTYPES,
    FORMAT,
    LOCK_FILE,
    MANIFEST,
    SHARD_META,
    VERSION,
    TeacherCacheError,
    epoch_dir,
    read_json,
    shard_name,
)
from .lock import manifest_lock
from .shards import EpochReader, ShardWriter

#: ``mode`` values: fill the cache while the live teacher runs, or replace the teacher by it.
CACHE_MODES = ('write', 'read')


class TeacherOutputCache:
    """Stores or serves a frozen teacher's outputs per (epoch, sample index); see
    :mod:`mlkd.teacher_cache`.

    A distiller's teacher source owns one (``model.teacher_cache = dict(dir=..., mode=...,
    dtype=...)``, :mod:`mlkd.models.distillers.teacher_source`);
    :class:`~mlkd.engine.hooks.TeacherCacheHook` (or ``tools/cache_teacher.py``) opens it with the
    run's fingerprint and brackets every epoch with :meth:`begin_epoch` / :meth:`end_epoch`.

    Args:
        dir: the cache folder.
        mode: ``'write'`` (run the teacher, store its outputs) or ``'read'`` (serve them).
        dtype: storage dtype, ``'float32'`` (exact), ``'float16'`` or ``'bfloat16'`` (half the
            bytes; targets rounded).
        key: the config key of these settings, for error messages (``model.teachers.a.cache``
            for one teacher of a :class:`~mlkd.models.distillers.MultiTeacherDistiller`).
    """

    def __init__(
        self, dir: str, mode: str, dtype: str = 'float32', key: str = 'model.teacher_cache'
    ) -> None:
        if mode not in CACHE_MODES:
            raise TeacherCacheError(f"{key}.mode must be 'write' or 'read', got {mode!r}")
        if dtype not in CACHE_DTYPES:
            raise TeacherCacheError(
                f'{key}.dtype must be one of {sorted(CACHE_DTYPES)}, got {dtype!r}'
            )
        if not isinstance(dir, (str, os.PathLike)) or not str(dir):
            raise TeacherCacheError(f'{key}.dir must be a folder path, got {dir!r}')
        self.dir, self.mode, self.dtype, self.key = os.fspath(dir), mode, dtype, key
        self.storage, self.torch_dtype = CACHE_DTYPES[dtype]
        self.manifest: dict | None = None
        self.tap_paths: dict[str, str] = {}
        self.epoch: int | None = None
        self._writer: ShardWriter | None = None
        self._reader: EpochReader | None = None
        self._rank, self._world_size = 0, 1
        self._space_checked = False
        self._rows_expected = 0

    @classmethod
    def from_config(
        cls, cfg: Mapping | None, key: str = 'model.teacher_cache'
    ) -> TeacherOutputCache | None:
        """``None`` when ``cfg`` is ``None`` or leaves both ``dir`` and ``mode`` unset (``key``:
        the config key of ``cfg``, for error messages)."""
        if cfg is None:
            return None
        cfg = dict(cfg)
        unknown = set(cfg) - {'dir', 'mode', 'dtype'}
        if unknown:
            raise TeacherCacheError(
                f"{key} has unknown key(s) {sorted(unknown)}; known: 'dir', 'mode', 'dtype'"
            )
        if cfg.get('dir') is None and cfg.get('mode') is None:
            return None
        if cfg.get('dir') is None:
            raise TeacherCacheError(
                f'{key}.mode={cfg.get("mode")!r} needs {key}.dir (the cache folder)'
            )
        return cls(cfg['dir'], cfg.get('mode'), cfg.get('dtype', 'float32'), key)

    def __repr__(self) -> str:
        return f'TeacherOutputCache(dir={self.dir!r}, mode={self.mode!r}, dtype={self.dtype!r})'

    # ----------------------------------------------------------------- session
    @property
    def manifest_path(self) -> str:
        return osp.join(self.dir, MANIFEST)

    def open(
        self,
        fingerprint: Mapping[str, Any],
        taps: list[str],
        tap_paths: Mapping[str, str] | None = None,
    ) -> None:
        """Check (read) or create / check (write) the manifest against the run's ``fingerprint``.

        Args:
            fingerprint: what the outputs depend on (:mod:`.fingerprint`); every field must match.
            taps: the teacher taps the run's losses read (``t_logits``, ``t_stage3``...).
            tap_paths: tap -> the teacher module it is recorded at; a writer records them, and a
                tap the cache recorded at another module is refused.
        """
        self._rank, self._world_size = get_rank(), get_world_size()
        fingerprint = json.loads(json.dumps(dict(fingerprint)))  # tuples -> lists, as stored
        if self.mode == 'write':
            manifest = self._create_or_check_manifest(fingerprint)
            lacking = [t for t in taps if t not in manifest['taps']]
            if lacking and manifest['epochs']:
                # The written epochs would be skipped, and a reader of these taps refused later.
                raise TeacherCacheError(
                    f'teacher cache {self.dir}: holds {sorted(manifest["taps"])} for epochs '
                    f'{self.epochs_written_in(manifest)}, and this run also writes {lacking}: '
                    'write to a new folder, or delete this one to cache every output afresh'
                )
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
        self.tap_paths = {name: path for name, path in (tap_paths or {}).items() if name in taps}
        self._check_tap_paths(manifest.get('tap_paths') or {})
        self.manifest = manifest

    def _create_or_check_manifest(self, fingerprint: dict) -> dict:
        """The manifest of a cache opened for writing: checked if it exists, else created by rank
        0 in an empty folder; under the folder's lock, so that of several processes opening a
        new cache at once one creates it and the others check it."""
        os.makedirs(self.dir, exist_ok=True)
        if not osp.isfile(self.manifest_path) and not osp.exists(osp.join(self.dir, LOCK_FILE)):
            # Before the lock file is made in someone's folder (a folder with the lock file is a
            # cache being made: its other writers are checked under the lock, below).
            self._refuse_foreign_folder()
        with manifest_lock(self.dir):
            manifest = self._checked_manifest(fingerprint)
            if manifest is None:
                self._refuse_foreign_folder()
        barrier()  # every rank has looked at the folder before rank 0 fills it
        if manifest is None and self._rank == 0:
            with manifest_lock(self.dir):  # another process may have created it meanwhile
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
                    write_json_atomic(self.manifest_path, manifest)
        barrier()
        if manifest is None:  # a rank that looked before rank 0 created it
            manifest = self._checked_manifest(fingerprint)
        return manifest

    def _checked_manifest(self, fingerprint: Mapping[str, Any]) -> dict | None:
        """The manifest on disk after checking that it is this run's cache (format, every
        fingerprint field, storage dtype); ``None`` when the folder has none."""
        if not osp.isfile(self.manifest_path):
            return None
        manifest = read_json(self.manifest_path, 'manifest')
        if manifest.get('format') != FORMAT:
            raise TeacherCacheError(
                f'teacher cache: {self.manifest_path} is not an mlkd teacher-cache manifest'
            )
        if manifest.get('version') != VERSION:
            raise TeacherCacheError(
                f'teacher cache {self.dir}: written in format version {manifest.get("version")} '
                f'(another mlkd), this mlkd reads version {VERSION}: write it again (another '
                'folder, or delete this one; a benchmark: --overwrite)'
            )
        self._check_fingerprint(manifest, fingerprint)
        if manifest.get('dtype') != self.dtype:
            raise TeacherCacheError(
                f'teacher cache {self.dir}: dtype differs: the cache stores '
                f'{manifest.get("dtype")!r}, {self.key}.dtype is {self.dtype!r}'
            )
        return manifest

    def _check_tap_paths(self, recorded: Mapping[str, str]) -> None:
        for name, path in self.tap_paths.items():
            if recorded.get(name, path) != path:
                raise TeacherCacheError(
                    f'teacher cache {self.dir}: tap {name} was cached from the teacher module '
                    f'{recorded[name]!r}, this run records it at {path!r}; refusing to train on '
                    'targets of another setting'
                )

    def _refuse_foreign_folder(self) -> None:
        if any(name != LOCK_FILE for name in os.listdir(self.dir)):
            raise TeacherCacheError(
                f'teacher cache: {self.dir} is a non-empty folder that is '
                f'not a teacher cache (no {MANIFEST}); choose an empty '
                'or new folder'
            )

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
        return self.epochs_written_in(self.manifest)

    @staticmethod
    def epochs_written_in(manifest: Mapping | None) -> list[int]:
        return sorted(int(e) for e in (manifest or {}).get('epochs', {}))

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
            self._reader = EpochReader(
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
        folder = osp.join(epoch_dir(self.dir, self.epoch), shard_name(self._rank, self._world_size))
        os.makedirs(osp.dirname(folder), exist_ok=True)
        # What an interrupted writer of this shard left behind is never read: remove it.
        for stale in glob.glob(osp.join(osp.dirname(folder), f'.{osp.basename(folder)}.*.tmp')):
            shutil.rmtree(stale, ignore_errors=True)
        self._writer = ShardWriter(folder, self.storage, self.torch_dtype)
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
            folder = epoch_dir(self.dir, self.epoch)
            shards = [
                read_json(
                    osp.join(folder, shard_name(r, self._world_size), SHARD_META), 'shard file'
                )
                for r in range(self._world_size)
            ]
            with manifest_lock(self.dir):
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
                self._check_tap_paths(manifest.get('tap_paths') or {})  # another writer's meanwhile
                manifest['tap_paths'] = {**(manifest.get('tap_paths') or {}), **self.tap_paths}
                manifest['epochs'][str(self.epoch)] = dict(
                    world_size=self._world_size, rows=sum(s['rows'] for s in shards)
                )
                write_json_atomic(self.manifest_path, manifest)
            self.manifest = manifest
        barrier()
        if self._rank != 0:
            self.manifest = read_json(self.manifest_path, 'manifest')

    def close(self) -> None:
        """Drop an unfinished shard (its temporary folder) and the memory maps."""
        if self._writer is not None:
            with contextlib.suppress(OSError):
                self._writer.discard()
        self._writer = self._reader = None
