"""The on-disk layout of a teacher cache: file names, storage dtypes, JSON files, epoch folders.

See :mod:`mlkd.teacher_cache` for the layout and what each file holds.
"""

from __future__ import annotations

import json
import os.path as osp

import numpy as np
import torch

#: Storage dtypes: name -> (numpy dtype on disk, torch dtype of the stored values). numpy has no
#: bfloat16, so bfloat16 values are stored as their raw 16 bits.
CACHE_DTYPES = {
    'float32': (np.float32, torch.float32),
    'float16': (np.float16, torch.float16),
    'bfloat16': (np.uint16, torch.bfloat16),
}
MANIFEST = 'manifest.json'
#: Locked around every read-modify-write of the manifest (:mod:`.lock`); not part of the cache.
LOCK_FILE = '.manifest.lock'
SHARD_META = 'shard.json'
INDEX_FILE = 'index.bin'
FORMAT = 'mlkd-teacher-cache'
#: 2: the fingerprint holds the data preprocessor's digest, the manifest each tap's module path.
VERSION = 2


class TeacherCacheError(ValueError):
    """A teacher cache that cannot be used as asked (names the field, file or value at fault)."""


def written_epochs(folder: str) -> list[int]:
    """The epochs a cache folder holds completely (``[]`` for a folder without a manifest)."""
    path = osp.join(folder, MANIFEST)
    if not osp.isfile(path):
        return []
    return sorted(int(e) for e in read_json(path, 'manifest').get('epochs', {}))


def shard_name(rank: int, world_size: int) -> str:
    """Folder name of the shard written by process ``rank`` of ``world_size``."""
    return f'shard_{rank:05d}_of_{world_size:05d}'


def epoch_dir(root: str, epoch: int) -> str:
    """Folder of one epoch's shards."""
    return osp.join(root, f'epoch_{epoch:04d}')


def read_json(path: str, what: str) -> dict:
    """The JSON file ``path`` (a manifest or shard file, named ``what`` in errors)."""
    try:
        with open(path, encoding='utf-8') as f:
            return json.load(f)
    except json.JSONDecodeError as error:
        raise TeacherCacheError(
            f'teacher cache: {what} {path} is not valid JSON ({error})'
        ) from None
