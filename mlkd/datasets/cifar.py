"""CIFAR-10 / CIFAR-100 from their python release, unpickled without running pickled code.

The release (https://www.cs.toronto.edu/~kriz/cifar.html) is a folder of pickled dicts::

    <data_root>/cifar-10-batches-py/   data_batch_1 .. data_batch_5, test_batch, batches.meta
    <data_root>/cifar-100-python/      train, test, meta

Every batch holds ``data`` (uint8 ``[N, 3072]``, the R, G and B planes of a 32×32 image per row)
and the labels (``labels`` for CIFAR-10, ``fine_labels`` for CIFAR-100); the meta file holds the
class names (``label_names`` / ``fine_label_names``). This is the layout mmpretrain's ``CIFAR10`` /
``CIFAR100`` and torchvision read. mmpretrain's classes are reused for the layout, splits and
class names, but not for loading: they ``pickle.loads`` the files (a pickle can run any code),
insist on the released MD5 sums (so they reject any other copy, such as a test fixture) and, with
their default ``download=True``, fetch the archive when a check fails. Here a batch is read by
:class:`CifarUnpickler`, which only resolves the few numpy globals an array needs, and every
file is checked for what the dataset relies on, with errors that name the file.
"""

from __future__ import annotations

import codecs
import os.path as osp
import pickle
from typing import Any

import numpy as np
from mmpretrain.datasets import CIFAR10 as _MMPretrainCIFAR10
from mmpretrain.datasets import CIFAR100 as _MMPretrainCIFAR100

from mlkd.registry import DATASETS

from .utils import require_data_root

__all__ = ['CIFAR10', 'CIFAR100', 'CifarUnpickler', 'ForbiddenPickleGlobal', 'load_cifar_pickle']

_IMAGE_SIZE = 32
_ROW_LENGTH = 3 * _IMAGE_SIZE * _IMAGE_SIZE


def _numpy_object(module: str, name: str) -> Any:
    # numpy 2 moved ``numpy.core`` to ``numpy._core``; files written by either name the module
    # they were written with, so both spellings map to the object of the installed numpy.
    core = getattr(np, '_core', None) or np.core
    return getattr(getattr(core, module), name)


#: The globals a pickled numpy array needs (written by numpy 1 or 2, pickle protocol 2..5) and
#: nothing else. ``_codecs.encode`` rebuilds ``bytes`` in protocol-2 pickles written by Python 3.
_ALLOWED_GLOBALS = {
    ('numpy', 'ndarray'): np.ndarray,
    ('numpy', 'dtype'): np.dtype,
    ('numpy.core.multiarray', '_reconstruct'): _numpy_object('multiarray', '_reconstruct'),
    ('numpy._core.multiarray', '_reconstruct'): _numpy_object('multiarray', '_reconstruct'),
    ('numpy.core.numeric', '_frombuffer'): _numpy_object('numeric', '_frombuffer'),
    ('numpy._core.numeric', '_frombuffer'): _numpy_object('numeric', '_frombuffer'),
    ('_codecs', 'encode'): codecs.encode,
}


class ForbiddenPickleGlobal(pickle.UnpicklingError):
    """A pickle asked for a global outside :data:`_ALLOWED_GLOBALS` (nothing was called)."""


class CifarUnpickler(pickle.Unpickler):
    """Unpickler for CIFAR batches: plain containers, strings, numbers and numpy arrays only.

    Args:
        file: binary file object.
        path: file path, for error messages.
    """

    def __init__(self, file, path: str) -> None:
        # ``latin1`` is how Python 3 must read the Python 2 strings of the released files.
        super().__init__(file, encoding='latin1')
        self.path = path

    def find_class(self, module: str, name: str) -> Any:
        """Resolve only the allowed numpy globals; refuse anything else before it is touched."""
        try:
            return _ALLOWED_GLOBALS[(module, name)]
        except KeyError:
            raise ForbiddenPickleGlobal(
                f'{self.path}: refusing to unpickle global {module}.{name}; a CIFAR batch holds '
                'only dicts, lists, strings and numpy arrays (the file is corrupt or '
                'malicious)'
            ) from None


def load_cifar_pickle(path: str) -> dict[str, Any]:
    """Read one CIFAR pickle with :class:`CifarUnpickler`; ``bytes`` keys become ``str``.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ForbiddenPickleGlobal: the pickle references a global other than numpy's array ones.
        ValueError: the file is truncated or not a pickled dict.
    """
    if not osp.isfile(path):
        raise FileNotFoundError(f'CIFAR file {path!r} does not exist')
    with open(path, 'rb') as file:
        try:
            entry = CifarUnpickler(file, path).load()
        except ForbiddenPickleGlobal:
            raise
        except Exception as exc:  # pickle raises many types on damaged input
            raise ValueError(
                f'{path}: truncated or corrupt CIFAR pickle ({type(exc).__name__}: {exc})'
            ) from None
    if not isinstance(entry, dict):
        raise ValueError(f'{path}: expected a pickled dict, got {type(entry).__name__}')
    return {k.decode('latin1') if isinstance(k, bytes) else k: v for k, v in entry.items()}


def _require_key(entry: dict, key: str, path: str) -> Any:
    if key not in entry:
        raise KeyError(f'{path}: no key {key!r} (keys: {sorted(map(str, entry))})')
    return entry[key]


class _SafeCifarMixin:
    """Loading shared by :class:`CIFAR10` and :class:`CIFAR100` (mmpretrain's layout attributes:
    ``base_folder``, ``train_list``, ``test_list``, ``meta``, ``url``; plus ``label_key``)."""

    label_key: str

    def __init__(
        self, data_root: str = '', split: str = 'train', download: bool = False, **kwargs
    ) -> None:
        if download:
            raise ValueError(
                f'{type(self).__name__}: mlkd never downloads datasets '
                f'(download=True); fetch {self.url} and extract it under data_root'
            )
        super().__init__(data_root=data_root, split=split, download=False, **kwargs)

    def _file(self, name: str) -> str:
        return osp.join(self.data_prefix['root'], self.base_folder, name)

    def _check_files(self) -> None:
        names = [name for name, _ in self.train_list + self.test_list] + [self.meta['filename']]
        missing = [self._file(name) for name in names if not osp.isfile(self._file(name))]
        if missing:
            raise FileNotFoundError(
                f'{type(self).__name__}: missing {missing}; data_root must hold the folder '
                f'{self.base_folder!r} of the python release ({self.url}, extracted)'
            )

    def _read_batch(self, path: str, num_classes: int) -> tuple[np.ndarray, np.ndarray]:
        entry = load_cifar_pickle(path)
        data = _require_key(entry, 'data', path)
        if (
            not isinstance(data, np.ndarray)
            or data.dtype != np.uint8
            or data.ndim != 2
            or data.shape[1] != _ROW_LENGTH
        ):
            shape = getattr(data, 'shape', None)
            raise ValueError(
                f"{path}: 'data' must be a uint8 array [N, {_ROW_LENGTH}], got "
                f'{type(data).__name__} {getattr(data, "dtype", "")} {shape}'
            )
        labels = np.asarray(_require_key(entry, self.label_key, path))
        if labels.shape != (len(data),) or not np.issubdtype(labels.dtype, np.integer):
            raise ValueError(
                f'{path}: {self.label_key!r} must hold {len(data)} integers, got '
                f'{labels.dtype} {labels.shape}'
            )
        bad = np.flatnonzero((labels < 0) | (labels >= num_classes))
        if bad.size:
            raise ValueError(
                f'{path}: {self.label_key}[{bad[0]}] = {labels[bad[0]]} is outside '
                f'[0, {num_classes}) ({bad.size} such labels)'
            )
        return data, labels.astype(np.int64)

    def _check_meta(self) -> None:
        path = self._file(self.meta['filename'])
        names = [
            n.decode('latin1') if isinstance(n, bytes) else str(n)
            for n in _require_key(load_cifar_pickle(path), self.meta['key'], path)
        ]
        if tuple(names) != tuple(self.CLASSES):
            raise ValueError(
                f'{path}: {self.meta["key"]} {names[:5]}... ({len(names)} names) '
                f'differ from the dataset classes {list(self.CLASSES)[:5]}... '
                f'({len(self.CLASSES)})'
            )

    def load_data_list(self) -> list[dict]:
        """Read the split's batches: ``{'img': uint8 [32, 32, 3] RGB, 'gt_label': int}`` each."""
        require_data_root(
            type(self).__name__,
            self.data_prefix['root'],
            f'the folder {self.base_folder!r} of the python release',
        )
        self._check_files()
        self._check_meta()
        files = self.train_list if self.split == 'train' else self.test_list
        batches = [self._read_batch(self._file(name), len(self.CLASSES)) for name, _ in files]
        images = np.concatenate([data for data, _ in batches])
        images = images.reshape(-1, 3, _IMAGE_SIZE, _IMAGE_SIZE).transpose(0, 2, 3, 1)
        labels = np.concatenate([labels for _, labels in batches])
        return [{'img': img, 'gt_label': int(label)} for img, label in zip(images, labels)]


@DATASETS.register_module()
class CIFAR10(_SafeCifarMixin, _MMPretrainCIFAR10):
    """CIFAR-10 (``data_batch_1..5`` / ``test_batch``, ``batches.meta``), loaded safely.

    Args:
        data_root: folder that holds ``cifar-10-batches-py``.
        split: ``'train'`` (50,000 images) or ``'test'`` (10,000).
        download: must be False (kept for mmpretrain's signature).
        **kwargs: :class:`mmpretrain.datasets.BaseDataset` arguments (``pipeline``, ...).

    Each sample is ``img`` (uint8 ``[32, 32, 3]``, RGB) and ``gt_label`` (int in ``[0, 10)``).
    """

    label_key = 'labels'


@DATASETS.register_module()
class CIFAR100(_SafeCifarMixin, _MMPretrainCIFAR100):
    """CIFAR-100 (``train`` / ``test``, ``meta``) with its 100 fine labels, loaded safely.

    Args:
        data_root: folder that holds ``cifar-100-python``.
        split: ``'train'`` (50,000 images) or ``'test'`` (10,000).
        download: must be False (kept for mmpretrain's signature).
        **kwargs: :class:`mmpretrain.datasets.BaseDataset` arguments (``pipeline``, ...).

    Each sample is ``img`` (uint8 ``[32, 32, 3]``, RGB) and ``gt_label`` (int in ``[0, 100)``).
    """

    label_key = 'fine_labels'
