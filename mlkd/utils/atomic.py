"""Writing a file all at once, so that a crash never leaves half of it behind."""

from __future__ import annotations

import contextlib
import json
import os
import os.path as osp
import uuid
from collections.abc import Iterator
from typing import Any, BinaryIO


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """Open a temporary file beside ``path`` for binary writing; move it onto ``path`` at the end.

    Whoever reads ``path`` (and whatever is left after a crash or a full disk) is the previous
    file or the complete new one, never a truncated one: the data is written to
    ``.<name>.<random>.tmp`` in the same folder, flushed to disk, then renamed with
    ``os.replace``, which is atomic within a file system. If the block raises, the temporary file
    is removed and ``path`` is untouched. The folder is created if needed; the new file gets the
    usual permissions (``0o666`` less the umask).
    """
    path = os.fspath(path)
    folder = osp.dirname(osp.abspath(path))
    os.makedirs(folder, exist_ok=True)
    temporary = osp.join(folder, f'.{osp.basename(path)}.{uuid.uuid4().hex[:12]}.tmp')
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, 'wb') as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    # Make the rename itself durable (best effort: not every file system allows it).
    with contextlib.suppress(OSError):
        folder_descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(folder_descriptor)
        finally:
            os.close(folder_descriptor)


def write_json_atomic(path: str | os.PathLike, data: Any) -> None:
    """Write ``data`` to ``path`` as JSON (indent 1, sorted keys) with :func:`atomic_write`:
    readers see the old file or the whole new one. The caller decides whether ``path`` may be
    replaced (:mod:`mlkd.utils.output_policy` for a tool's outputs)."""
    with atomic_write(path) as file:
        file.write(json.dumps(data, indent=1, sort_keys=True).encode('utf-8'))
