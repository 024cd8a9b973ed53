"""Start-up checks shared by the path-based datasets."""

from __future__ import annotations

import json
import os.path as osp
from collections.abc import Collection
from typing import Any


def check_config_choice(dataset: str, key: str, value: Any, choices: Collection) -> None:
    """Raise a ValueError naming ``dataset``, the config key and ``choices`` unless ``value`` is
    one of ``choices``.

    Args:
        dataset: class name for the message.
        key: the config key (the dataset argument) that holds ``value``.
        value: the configured value.
        choices: the accepted values, shown in the message as given.
    """
    if value not in choices:
        raise ValueError(
            f'{dataset}: {key} must be one of {choices}, got {value!r} (config key `{key}`)'
        )


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
            f'`data_root`; resolved to {osp.abspath(data_root)!r}); expected {expected}'
        )
    return data_root


def read_annotation_json(dataset: str, path: str, missing: str) -> Any:
    """Parse the json annotation file ``path``, or raise naming the dataset and the file.

    Args:
        dataset: class name for the message.
        path: the annotation file.
        missing: the message's tail when the file does not exist (which config key sets it, what
            file is expected there).

    Raises:
        FileNotFoundError: ``path`` is not a file (``'{dataset}: ... {path!r} not found ...'``).
        ValueError: the file is not valid json.
    """
    if not osp.isfile(path):
        raise FileNotFoundError(f'{dataset}: {missing}')
    try:
        with open(path, encoding='utf-8') as f:
            return json.load(f)
    except json.JSONDecodeError as err:
        raise ValueError(f'{dataset}: {path} is not valid json: {err}') from None


#: What a dataset does with an image its annotation names but that is not on disk.
MISSING_IMAGE_POLICIES = ('error', 'skip')
_LISTED = 5


def check_missing_images(
    data_list: list[dict], policy: str, dataset: str, source: str
) -> list[dict]:
    """Apply a missing-image policy to a data list (one ``isfile`` per image, at start-up).

    ``'error'``: raise ``FileNotFoundError`` naming the first missing images and ``source`` (the
    annotation that lists them). ``'skip'``: drop them and log their count (a warning through
    MMEngine's logger, with the first few paths), so a partly downloaded dataset (NUS-WIDE's Flickr
    images) trains on what exists and says how much is absent.
    """
    check_config_choice(dataset, 'missing_images', policy, MISSING_IMAGE_POLICIES)
    present = [osp.isfile(info['img_path']) for info in data_list]
    missing = [info['img_path'] for info, ok in zip(data_list, present) if not ok]
    if not missing:
        return data_list
    listed = ', '.join(repr(p) for p in missing[:_LISTED])
    more = f' and {len(missing) - _LISTED} more' if len(missing) > _LISTED else ''
    if policy == 'error':
        raise FileNotFoundError(
            f'{dataset}: {len(missing)} image(s) listed in {source} do not '
            f'exist: {listed}{more} (set missing_images="skip" to drop them)'
        )
    from mmengine.logging import MMLogger

    MMLogger.get_current_instance().warning(
        f'{dataset}: skipped {len(missing)} of {len(data_list)} images listed in {source} that '
        f'do not exist (missing_images="skip"): {listed}{more}'
    )
    return [info for info, ok in zip(data_list, present) if ok]
