"""One epoch's rows on disk: the shard a process writes, and the reader of all shards of an epoch."""

from __future__ import annotations

import os
import os.path as osp
import shutil
import uuid
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from mlkd.utils.atomic import write_json_atomic

from .format import (
    INDEX_FILE,
    SHARD_META,
    TeacherCacheError,
    epoch_dir,
    read_json,
    shard_name,
)


class ShardWriter:
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
        write_json_atomic(osp.join(self.temp_dir, SHARD_META), dict(rows=self.rows, taps=self.taps))
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


class EpochReader:
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
        folder = epoch_dir(root, epoch)
        self.shards: list[dict[str, np.ndarray]] = []
        indices = []
        for rank in range(world_size):
            shard = osp.join(folder, shard_name(rank, world_size))
            meta_path = osp.join(shard, SHARD_META)
            if not osp.isfile(meta_path):
                raise TeacherCacheError(
                    f'teacher cache: epoch {epoch} is recorded as written but '
                    f'its shard {shard} is missing or incomplete'
                )
            meta = read_json(meta_path, 'shard file')
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
