"""Start-up checks shared by the path-based datasets."""
from __future__ import annotations

import os.path as osp


def require_data_root(dataset: str, data_root: str, expected: str) -> str:
    """Return ``data_root`` with ``~`` expanded, or raise naming the config key and the path.

    Args:
        dataset: class name for the message.
        data_root: the configured value.
        expected: what the folder should hold, for the message.
    """
    if not data_root:
        raise FileNotFoundError(f'{dataset}: config key `data_root` is empty; set it to {expected}')
    data_root = osp.expanduser(data_root)
    if not osp.isdir(data_root):
        raise FileNotFoundError(
            f'{dataset}: data_root directory {data_root!r} does not exist (config key '
            f'`data_root`; resolved to {osp.abspath(data_root)!r}); expected {expected}')
    return data_root
