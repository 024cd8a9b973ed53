"""Values of a run config that cannot be right, refused before anything is built or written.

The key checks (:mod:`mlkd.utils.config_keys`) catch names that do not exist; these catch values
that mmengine and torch accept but that train nonsense or fail far from their cause:

* ``train_cfg.max_epochs`` / ``max_iters`` / ``val_interval`` not an integer, the first two
  negative (0 only warns, ``LabelCoverageHook``);
  ``train_cfg.val_interval`` not a positive integer (mmengine divided by it);
* a learning rate (``optim_wrapper.optimizer.lr``, a scheduler's ``eta_max`` / ``eta_min``)
  negative or not finite;
* any ``*temperature`` / ``tau`` in the model not positive (they divide logits);
* any ``loss_weight`` negative (also refused when the loss is built, ``check_loss_weight``);
* a dataloader pipeline that does not end with a packing transform (``Pack*``): collate then
  failed on raw dicts.

A batch larger than the dataset with ``drop_last=True`` needs the dataset's length, so it is
checked when the training loop is built (:func:`check_train_loader`).

One value is only warned about (:func:`warn_cut_schedule`): an epoch schedule longer than
``train_cfg.max_epochs`` (the usual ``--cfg-options train_cfg.max_epochs=1`` of a quick try, which
stops a one-cycle schedule in its warm-up): fine for a smoke test, not for a number.
"""

from __future__ import annotations

import math
from typing import Any

from mlkd.utils.fingerprint import config_leaves

_LOADERS = ('train_dataloader', 'val_dataloader', 'test_dataloader')


class ConfigValueError(ValueError):
    """A config value that cannot be right; the message names the key and the value."""


def _refuse(key: str, value: Any, expected: str) -> None:
    raise ConfigValueError(f'config value {key}={value} is invalid: {expected}')


#: Counts a loop takes: integers (a string such as 'one' failed deep inside the first epoch).
_COUNTS = ('train_cfg.max_epochs', 'train_cfg.max_iters', 'train_cfg.val_interval')


def _check_numbers(leaves: dict[str, Any]) -> None:
    for key, value in leaves.items():
        if (
            key in _COUNTS
            and value is not None
            and (isinstance(value, bool) or not isinstance(value, int))
        ):
            _refuse(key, repr(value), 'it counts epochs / iterations: an integer')
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        last, text = key.rsplit('.', 1)[-1], value
        if key in ('train_cfg.max_epochs', 'train_cfg.max_iters') and value < 0:
            _refuse(key, text, 'the number of epochs / iterations cannot be negative')
        elif key == 'train_cfg.val_interval' and (value < 1 or value != int(value)):
            _refuse(
                key,
                text,
                'validate every N epochs (iterations) needs a positive integer N; '
                'to skip validation use --no-validate',
            )
        elif (
            key == 'optim_wrapper.optimizer.lr'
            or (key.startswith('param_scheduler.') and last in ('eta_max', 'eta_min'))
        ) and not (math.isfinite(value) and value >= 0):
            _refuse(key, text, 'a learning rate must be finite and not negative')
        elif (
            key.startswith('model.')
            and ('temperature' in last or last == 'tau')
            and not (math.isfinite(value) and value > 0)
        ):
            _refuse(key, text, 'a temperature divides the logits, it must be positive')
        elif last == 'loss_weight' and not (math.isfinite(value) and value >= 0):
            _refuse(
                key, text, 'a loss weight must be finite and not negative (0 switches the term off)'
            )


def _check_pipelines(cfg) -> None:
    for loader in _LOADERS:
        dataset = (cfg.get(loader) or {}).get('dataset') or {}
        pipeline = dataset.get('pipeline')
        if not isinstance(pipeline, (list, tuple)):
            continue
        last = pipeline[-1] if pipeline else None
        name = str(last.get('type', '')) if isinstance(last, dict) else repr(last)
        if not name.split('.')[-1].startswith('Pack'):
            ends = f'ends with {name!r}' if pipeline else 'is empty'
            raise ConfigValueError(
                f'{loader}.dataset.pipeline {ends}, not a packing transform: add '
                "dict(type='PackInputs') as its last step (the model takes the packed inputs "
                'and data samples)'
            )


def check_config_values(cfg) -> None:
    """Refuse the values listed in the module docstring.

    Raises:
        ConfigValueError: naming the key and the value.
    """
    _check_numbers(config_leaves(cfg, ignore=()))
    _check_pipelines(cfg)


def check_train_loader(dataloader, key: str = 'train_dataloader') -> None:
    """Refuse a training dataloader that yields no batch (a batch larger than the dataset with
    ``drop_last=True``): mmengine then failed with an unrelated error."""
    from mlkd.datasets.dataset_wrappers import dataset_name

    if len(dataloader) > 0:
        return
    dataset, batch_size = dataloader.dataset, dataloader.batch_size
    raise ConfigValueError(
        f'{key}.batch_size={batch_size} with drop_last=True gives no batch: the dataset '
        f'({dataset_name(dataset)}) has {len(dataset)} samples per process; lower the batch size '
        'or set drop_last=False'
    )


def warn_cut_schedule(cfg) -> list[str]:
    """Warn (``UserWarning``) about each epoch-based ``param_scheduler`` entry that ends after
    ``train_cfg.max_epochs`` (its ``end``, or a one-cycle ``total_steps``): training stops part
    way through it. Returns the warnings' texts."""
    import warnings

    max_epochs = (cfg.get('train_cfg') or {}).get('max_epochs')
    schedulers = cfg.get('param_scheduler') or []
    if not isinstance(max_epochs, int) or isinstance(schedulers, dict):
        return []
    texts = []
    for index, scheduler in enumerate(schedulers):
        if not scheduler.get('by_epoch', True):
            continue
        ends = [scheduler.get(k) for k in ('end', 'total_steps')]
        length = max(
            (e for e in ends if isinstance(e, (int, float)) and math.isfinite(e)), default=None
        )
        if length is not None and length > max_epochs:
            texts.append(
                f'param_scheduler[{index}] ({scheduler.get("type")}) runs to epoch {length:g}, '
                f'but train_cfg.max_epochs={max_epochs}: training stops part way through it (a '
                'one-cycle schedule in its warm-up); set its end / total_steps too for a '
                'shorter recipe'
            )
    for text in texts:
        warnings.warn(text, stacklevel=2)
    return texts
