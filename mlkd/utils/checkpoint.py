"""Checkpoints: loaded without running code hidden in them, saved atomically.

``torch.load(..., weights_only=False)`` unpickles anything, so opening a downloaded teacher (or
any file someone handed you) can run arbitrary code. :func:`load_local_checkpoint`, which
``import mlkd`` registers as mmengine's loader for local paths (``load_from``, ``--resume``,
``tools/test.py``'s checkpoint, ``model.teacher_ckpt``), always reads with ``weights_only=True``.
Checkpoints written by mmengine's Runner also hold a few non-tensor Python objects (the message
hub's ``HistoryBuffer`` objects, numpy RNG states and scalars, the one-cycle schedulers' annealing
functions); exactly those, listed in :func:`safe_globals`, are allowed, and only for the duration
of the load. A checkpoint given by an ``http(s)://`` URL is downloaded into torch hub's cache and
read the same way (:func:`load_url_checkpoint`).

A file that needs any other global is refused with :class:`UnsafeCheckpointError`, naming the
file and the globals. A file that is not a PyTorch checkpoint, or is truncated or damaged, raises
:class:`InvalidCheckpointError` naming the file.

Opting in for a trusted file (one you wrote yourself with code that stores other objects):

* ``--trust-checkpoint PATH`` (repeatable) on ``tools/train.py``, ``tools/test.py`` and
  ``tools/export_student.py``, or :func:`trust_checkpoint` from Python;
* the environment variable ``MLKD_TRUST_CHECKPOINTS``: a list of files separated by
  ``os.pathsep`` (``:`` on Linux), or ``1`` to trust every file (not recommended).

A trusted file is still read with ``weights_only=True`` first; only if that refuses it is it
unpickled in full, with a warning naming the globals it needed.

Loading into the model strictly and saving atomically are :class:`~mlkd.engine.MLKDRunner`'s
(``Runner.load_checkpoint`` / ``Runner.save_checkpoint``); this module holds their pieces:
:class:`CheckpointMismatchError` and :class:`AtomicLocalBackend`, the file backend the runner
saves local checkpoints through (a temporary file renamed into place, so a crash or a full disk
while saving leaves no truncated ``epoch_N.pth`` and never damages the file being replaced).
"""

from __future__ import annotations

import functools
import importlib
import os
import os.path as osp
import pickle
import re
import zipfile

import torch
from mmengine.fileio import LocalBackend, register_backend

from mlkd.utils.atomic import atomic_write

TRUST_ENV = 'MLKD_TRUST_CHECKPOINTS'

#: How torch.save's legacy (non-zip) format starts: pickle protocol 2, then the magic number.
_LEGACY_MAGIC = pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2)[:12]

_trusted_paths: set[str] = set()


class UnsafeCheckpointError(pickle.UnpicklingError):
    """A checkpoint needs globals that a weights-only load does not allow."""


class InvalidCheckpointError(ValueError):
    """A file is not a PyTorch checkpoint, or is truncated or damaged."""


class CheckpointMismatchError(ValueError):
    """A checkpoint's weights do not fit the model it is loaded into."""


def _allowed_attributes() -> dict[type, tuple[str, ...]]:
    """The class attributes a checkpoint may name through ``getattr``: functions it stores.

    pickle names a method or static method as ``getattr(Class, 'name')``. mmengine's
    ``OneCycleParamScheduler`` keeps its annealing function in its state dict, and each
    ``HistoryBuffer`` pickles the class's table of statistics methods.
    """
    from mmengine.logging import HistoryBuffer
    from mmengine.optim.scheduler.param_scheduler import OneCycleParamScheduler

    return {
        OneCycleParamScheduler: ('_annealing_cos', '_annealing_linear'),
        HistoryBuffer: ('min', 'max', 'current', 'mean'),
    }


def _restricted_getattr(owner: type, name: str):
    """Stands in for ``builtins.getattr`` while unpickling: only :func:`_allowed_attributes`.

    A real ``getattr`` would let a pickle reach any attribute of any object it can build (a
    function's ``__globals__``, a module, ...).
    """
    allowed = _allowed_attributes()
    if name not in allowed.get(owner, ()):
        raise pickle.UnpicklingError(
            f'getattr({getattr(owner, "__qualname__", type(owner).__qualname__)}, {name!r}) is '
            'not allowed in a checkpoint; allowed: '
            + ', '.join(
                f'{cls.__qualname__}.{attr}' for cls, attrs in allowed.items() for attr in attrs
            )
        )
    return getattr(owner, name)


@functools.lru_cache(maxsize=1)
def safe_globals() -> tuple:
    """The non-tensor globals that mlkd / mmengine checkpoints need, each allowed for a reason.

    Found by saving real checkpoints (classifier and distiller runs, resumed, float16 AMP with a
    loss scaler, StudentEMAHook) and listing what ``weights_only=True`` refused. Every entry can be
    called by a pickle with arbitrary arguments, so each must be harmless to call.
    """
    import numpy as np
    from mmengine.logging import HistoryBuffer
    from mmengine.optim.scheduler.param_scheduler import OneCycleParamScheduler

    from mlkd.engine.schedulers.one_cycle import _anneal_cos, _anneal_linear

    try:
        multiarray = importlib.import_module('numpy._core.multiarray')
    except ImportError:  # numpy 1.x
        multiarray = importlib.import_module('numpy.core.multiarray')
    numeric_dtypes = (
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.float16,
        np.float32,
        np.float64,
        np.complex64,
        np.complex128,
    )
    entries = [
        # The message hub's logged scalars ('log_scalars'); its constructor only stores lists.
        # Its __setstate__ merges the pickled statistics methods into the class-wide table: a
        # crafted file can only put allowed callables there (a wrong one fails when called).
        HistoryBuffer,
        # numpy arrays: HistoryBuffer's histories and RandomStateHook's numpy RNG state. An array
        # is rebuilt by _reconstruct + ndarray.__setstate__ from bytes (or, for object arrays,
        # from objects this same restricted unpickler produced). numpy 2 writes the
        # numpy._core path, numpy 1 the numpy.core one: both names map to the same function.
        np.ndarray,
        (multiarray._reconstruct, 'numpy._core.multiarray._reconstruct'),
        (multiarray._reconstruct, 'numpy.core.multiarray._reconstruct'),
        # numpy scalars (e.g. a float64 metric kept in the message hub's runtime info).
        (multiarray.scalar, 'numpy._core.multiarray.scalar'),
        (multiarray.scalar, 'numpy.core.multiarray.scalar'),
        # dtypes of those arrays and scalars; numpy >= 1.25 gives every dtype instance a class
        # of its own (numpy.dtypes.Float64DType, ...), which the unpickler checks when it sets
        # the dtype's state. Numeric types only: no object, string or void dtypes.
        np.dtype,
        *dict.fromkeys(type(np.dtype(t)) for t in numeric_dtypes),
        # mmengine's OneCycleLR state dict holds its annealing function, named through the class
        # and getattr. Calling the class needs a real optimizer, which a weights-only pickle
        # cannot build, so it constructs nothing.
        OneCycleParamScheduler,
        # getattr for the methods above, and nothing else (see _restricted_getattr).
        (_restricted_getattr, 'builtins.getattr'),
        # mlkd's OneCycleMomentum stores its annealing function: pure arithmetic on floats.
        _anneal_cos,
        _anneal_linear,
    ]
    return tuple(entries)


def trust_checkpoint(path: str) -> None:
    """Allow ``path`` to be unpickled in full if a weights-only load refuses it.

    Raises:
        FileNotFoundError: naming the path when it is not a file (a typo would trust nothing).
    """
    path = osp.expanduser(path)
    if not osp.isfile(path):
        raise FileNotFoundError(f'--trust-checkpoint: file not found: {path!r}')
    _trusted_paths.add(osp.realpath(path))


def is_trusted(path: str) -> bool:
    """Whether ``path`` was trusted by :func:`trust_checkpoint` or ``MLKD_TRUST_CHECKPOINTS``."""
    value = os.environ.get(TRUST_ENV, '').strip()
    if value == '1':
        return True
    listed = {osp.realpath(osp.expanduser(p)) for p in value.split(os.pathsep) if p}
    return osp.realpath(path) in (_trusted_paths | listed)


def _is_torch_file(path: str) -> bool:
    """True for torch.save's zip format (a ``*/data.pkl`` inside) and its legacy format."""
    with open(path, 'rb') as file:
        head = file.read(len(_LEGACY_MAGIC))
    if head == _LEGACY_MAGIC:
        return True
    if not zipfile.is_zipfile(path):
        return head.startswith(b'PK\x03\x04')  # a zip that lost its end: truncated checkpoint
    try:
        with zipfile.ZipFile(path) as archive:
            return any(name.endswith('/data.pkl') for name in archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return True


def _torch_reason(error: BaseException) -> str:
    """The specific part of torch's long weights-only message (its boilerplate dropped)."""
    message = str(error)
    found = re.search(
        r'WeightsUnpickler error:(.*?)(\n\s*\nCheck the documentation|$)', message, re.DOTALL
    )
    if found:
        return found.group(1).strip()
    boilerplate = ('Weights only load failed', 'Check the documentation')
    paragraphs = [p.strip() for p in re.split(r'\n\s*\n', message)]
    return (
        ' '.join(p for p in paragraphs if p and not p.startswith(boilerplate))
        or type(error).__name__
    )


def _refused_globals(path: str, reason: str) -> list[str]:
    """Every global in ``path`` that the allow-list lacks, else the one torch's message names."""
    allowed = set()
    for entry in safe_globals():
        allowed.add(
            entry[1] if isinstance(entry, tuple) else f'{entry.__module__}.{entry.__qualname__}'
        )
    try:
        found = torch.serialization.get_unsafe_globals_in_checkpoint(path)
    except (ValueError, RuntimeError):  # legacy format: torch cannot list them
        found = []
    refused = sorted(set(found) - allowed)
    if not refused:
        refused = re.findall(r'GLOBAL (\S+)', reason) or re.findall(r'but got (.+)$', reason)
    return refused


def _weights_only_load(path: str, map_location):
    """``torch.load(weights_only=True)`` with mlkd's allow-list; refusals name file and globals."""
    try:
        with torch.serialization.safe_globals(list(safe_globals())):
            return torch.load(path, map_location=map_location, weights_only=True)
    except Exception as error:  # noqa: BLE001 - random bytes raise anything from EOFError on
        if not _is_torch_file(path):
            what = (
                'an empty file'
                if osp.getsize(path) == 0
                else ("not a PyTorch checkpoint (neither torch.save's zip nor its legacy format)")
            )
            raise InvalidCheckpointError(f'{path!r} is {what}') from None
        reason = _torch_reason(error)
        if not isinstance(error, pickle.UnpicklingError):
            raise InvalidCheckpointError(
                f'checkpoint {path!r} is truncated or damaged and cannot be read '
                f'({type(error).__name__}: {reason})'
            ) from None
    refused = _refused_globals(path, reason)
    needs = f'needs {", ".join(refused)}, which' if refused else 'holds something that'
    raise UnsafeCheckpointError(
        f'refusing to load checkpoint {path!r}: it {needs} a weights-only load does not allow '
        '(unpickling it could run arbitrary code).\n'
        + ('' if refused else f'  torch: {reason}\n')
        + f'  If you trust this file, pass --trust-checkpoint {path} to tools/train.py, '
        f'tools/test.py or tools/export_student.py, or set {TRUST_ENV}={path}.'
    )


def load_local_checkpoint(filename: str, map_location=None):
    """Load a local checkpoint with ``weights_only=True`` (mmengine's loader for local paths).

    Raises:
        FileNotFoundError: naming the path when the file does not exist.
        UnsafeCheckpointError: the file needs globals outside :func:`safe_globals` and is not
            trusted; the message names the file, the globals and how to opt in.
        InvalidCheckpointError: the file is not a PyTorch checkpoint, or is truncated.
    """
    filename = osp.expanduser(filename)
    if not osp.isfile(filename):
        raise FileNotFoundError(f'checkpoint file not found: {filename!r}')
    try:
        checkpoint = _weights_only_load(filename, map_location)
    except UnsafeCheckpointError as error:
        if not is_trusted(filename):
            raise
        _logger().warning(
            f'{filename} is trusted ({TRUST_ENV} / --trust-checkpoint): '
            f'unpickling it in full. {str(error).splitlines()[0]}'
        )
        checkpoint = torch.load(filename, map_location=map_location, weights_only=False)
    _log_loaded(filename, checkpoint)
    return checkpoint


def load_url_checkpoint(url: str, map_location=None, model_dir: str | None = None):
    """Load a checkpoint at an ``http://`` or ``https://`` URL as a local one
    (:func:`load_local_checkpoint`: ``weights_only=True``), from torch hub's checkpoint cache
    (``torch.hub.get_dir()/checkpoints``, or ``model_dir``), downloading it there first if it is
    not cached yet; under ``torch.distributed`` rank 0 downloads, the others wait for it.

    mmengine's own loader for URLs goes through ``torch.hub.load_state_dict_from_url``, which
    unpickles in full (its ``weights_only`` defaults to ``False``); ``import mlkd`` registers this
    one for those prefixes instead (:mod:`mlkd.utils.compat`).

    Raises:
        UnsafeCheckpointError, InvalidCheckpointError: as :func:`load_local_checkpoint`, naming
            the cached file.
    """
    from urllib.parse import urlparse

    from mmengine.dist import get_dist_info

    folder = model_dir or osp.join(torch.hub.get_dir(), 'checkpoints')
    cached = osp.join(folder, osp.basename(urlparse(url).path))
    rank, world_size = get_dist_info()
    if rank == 0 and not osp.isfile(cached):
        os.makedirs(folder, exist_ok=True)
        _logger().info(f'Downloading {url} to {cached}')
        torch.hub.download_url_to_file(url, cached, progress=False)
    if world_size > 1:
        torch.distributed.barrier()
    return load_local_checkpoint(cached, map_location)


def _logger():
    from mmengine.logging import MMLogger

    return MMLogger.get_current_instance()


def _log_loaded(filename: str, checkpoint) -> None:
    from mmengine.logging import MMLogger

    if not MMLogger.check_instance_created(MMLogger.instance_name) and not MMLogger._instance_dict:
        return
    logger = MMLogger.get_current_instance()
    if isinstance(checkpoint, dict):
        parts = sorted(str(k) for k in checkpoint.keys())
        meta = checkpoint.get('meta', {}) if isinstance(checkpoint.get('meta'), dict) else {}
        where = ''
        if 'epoch' in meta or 'iter' in meta:
            where = f', saved at epoch {meta.get("epoch")} / iter {meta.get("iter")}'
        logger.info(f'Loaded checkpoint {filename} (contains: {", ".join(parts)}{where})')
    else:
        logger.info(f'Loaded checkpoint {filename}')


class AtomicLocalBackend(LocalBackend):
    """mmengine's local file backend, writing files atomically (see :func:`atomic_write`).

    Registered in mmengine's file backends as :data:`ATOMIC_LOCAL_BACKEND`, bound to no URI
    prefix: only a caller that names it (``backend_args=dict(backend=ATOMIC_LOCAL_BACKEND)``, as
    :class:`~mlkd.engine.MLKDRunner` does for local checkpoints) gets it.
    """

    def put(self, obj: bytes, filepath: str | os.PathLike) -> None:
        with atomic_write(filepath) as file:
            file.write(obj)


#: The name :class:`AtomicLocalBackend` is registered under in mmengine's file backends.
ATOMIC_LOCAL_BACKEND = 'mlkd_atomic_local'

register_backend(ATOMIC_LOCAL_BACKEND, AtomicLocalBackend, force=True)
