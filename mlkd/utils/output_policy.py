"""The one rule for every file a tool writes: nothing that existed is lost, nothing is half-written.

* A path that exists when the tool starts is replaced only with ``--overwrite`` (the error names
  the path and the flag).
* A tool never writes onto one of its own inputs, with or without ``--overwrite``.
* The file is written under a temporary name in the same folder and renamed into place
  (:func:`mlkd.utils.atomic.atomic_write`): a crash leaves the old file intact.

Tools check all their outputs before the long work starts (:func:`check_outputs`), then write
each one with :func:`open_output` or :func:`save_figure` (which check again, as the disk may have
changed meanwhile). ``docs/bad_inputs.md`` lists the tools and the test that pins each one.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import os.path as osp
from collections.abc import Iterable, Iterator
from typing import IO

from mlkd.utils.atomic import atomic_write

#: The command-line flag that allows replacing existing outputs.
OVERWRITE_FLAG = '--overwrite'


class OutputExistsError(FileExistsError):
    """An output path exists and ``--overwrite`` was not given."""


class OutputIsInputError(ValueError):
    """An output path is one of the tool's inputs."""


def add_overwrite_argument(
    parser: argparse.ArgumentParser,
    *aliases: str,
    help: str = 'replace output files that exist already (never the inputs)',
) -> None:
    """Add ``--overwrite`` (and ``aliases``, e.g. an older ``--force``) to ``parser``."""
    parser.add_argument(OVERWRITE_FLAG, *aliases, dest='overwrite', action='store_true', help=help)


def _same_file(a: str, b: str) -> bool:
    if osp.exists(a) and osp.exists(b):
        return osp.samefile(a, b)
    return osp.realpath(a) == osp.realpath(b)


def check_output(
    path: str | os.PathLike,
    *,
    inputs: Iterable[str | os.PathLike | None] = (),
    overwrite: bool = False,
    flag: str = OVERWRITE_FLAG,
) -> str:
    """Raise unless ``path`` may be written; return it as a string.

    Raises:
        OutputIsInputError: ``path`` is one of ``inputs`` (the same file, or the same resolved
            path); ``--overwrite`` does not allow it.
        IsADirectoryError: ``path`` is a folder.
        OutputExistsError: ``path`` exists and ``overwrite`` is false; names ``flag``.
    """
    path = os.fspath(path)
    for source in inputs:
        if source is not None and _same_file(path, os.fspath(source)):
            raise OutputIsInputError(
                f'output {path!r} is one of the inputs ({os.fspath(source)!r})'
                '; refusing to write onto it, choose another output path'
            )
    if osp.isdir(path):
        raise IsADirectoryError(f'output {path!r} is a directory, expected a file path')
    if osp.lexists(path) and not overwrite:
        raise OutputExistsError(f'output {path!r} exists; pass {flag} to replace it')
    return path


def check_outputs(paths: Iterable[str | os.PathLike | None], **kwargs) -> list[str]:
    """:func:`check_output` for every path that is not ``None`` (call it before the long work);
    also refuses two outputs that are the same file."""
    checked = [check_output(p, **kwargs) for p in paths if p is not None]
    resolved = [osp.realpath(p) for p in checked]
    for index, path in enumerate(resolved):
        if path in resolved[:index]:
            raise ValueError(
                f'two outputs are the same file {checked[index]!r}; give each output its own path'
            )
    return checked


def output_paths(stem: str, extensions: Iterable[str], **policy) -> dict[str, str]:
    """``{extension: f'{stem}.{extension}'}``, the files a tool writes, checked with
    :func:`check_outputs` (``policy``: ``inputs``, ``overwrite``) before any work."""
    outputs = {extension: f'{stem}.{extension}' for extension in extensions}
    check_outputs(outputs.values(), **policy)
    return outputs


@contextlib.contextmanager
def open_output(
    path: str | os.PathLike,
    mode: str = 'w',
    *,
    inputs: Iterable[str | os.PathLike | None] = (),
    overwrite: bool = False,
    flag: str = OVERWRITE_FLAG,
    encoding: str = 'utf-8',
    newline: str | None = None,
) -> Iterator[IO]:
    """Open ``path`` for writing under the output policy (``mode`` ``'w'`` text or ``'wb'``).

    The data goes to a temporary file beside ``path`` that is renamed onto it when the block
    ends; if the block raises, ``path`` is left as it was. The folder is created if needed.
    """
    if mode not in ('w', 'wb'):
        raise ValueError(f"open_output: mode must be 'w' or 'wb', got {mode!r}")
    check_output(path, inputs=inputs, overwrite=overwrite, flag=flag)
    with atomic_write(path) as binary:
        if mode == 'wb':
            yield binary
            return
        text = io.TextIOWrapper(binary, encoding=encoding, newline=newline)
        try:
            yield text
            text.flush()
        finally:
            text.detach()  # atomic_write closes the underlying file


def write_text(path: str | os.PathLike, text: str, **kwargs) -> None:
    """Write ``text`` to ``path`` under the output policy (see :func:`open_output`)."""
    with open_output(path, 'w', **kwargs) as file:
        file.write(text)


def save_figure(
    figure, path: str | os.PathLike, *, dpi: int = 100, tight_layout: bool = False, **kwargs
) -> None:
    """``figure.savefig`` under the output policy (the format is the extension, PNG if none),
    then close the figure: pyplot keeps every figure it made alive until it is closed.

    Args:
        tight_layout: call ``figure.tight_layout()`` first.
        **kwargs: the output policy's (:func:`open_output`: ``overwrite``, ``inputs``, ``flag``).
    """
    import matplotlib.pyplot as plt

    if tight_layout:
        figure.tight_layout()
    extension = osp.splitext(os.fspath(path))[1].lstrip('.').lower() or 'png'
    try:
        with open_output(path, 'wb', **kwargs) as file:
            figure.savefig(file, format=extension, dpi=dpi)
    finally:
        plt.close(figure)
