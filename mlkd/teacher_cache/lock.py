"""The cache folder's lock: one process at a time reads, changes and writes the manifest.

A :class:`filelock.FileLock` on :data:`~.format.LOCK_FILE` in the folder: ``fcntl.flock`` on
POSIX, ``msvcrt.locking`` on Windows, so every platform gets a real lock. The lock is host-local:
writers on several hosts sharing the folder over a network file system are not supported.
"""

from __future__ import annotations

import os.path as osp
from collections.abc import Iterator
from contextlib import contextmanager

from filelock import FileLock

from .format import LOCK_FILE


@contextmanager
def manifest_lock(folder: str) -> Iterator[None]:
    """Hold the exclusive lock of the cache ``folder`` (which must exist) for the block."""
    with FileLock(osp.join(folder, LOCK_FILE)):
        yield
