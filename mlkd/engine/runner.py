"""mlkd's Runner: mmengine's, plus what mlkd runs rely on, selected by the config.

``configs/_base_/default_runtime.py`` sets ``runner_type = 'MLKDRunner'``, and the tools build
runners with :func:`build_runner` (mmpretrain's rule: ``RUNNERS.build(cfg)`` when the config names
a ``runner_type``, else mmengine's ``Runner.from_cfg``). A config without ``runner_type`` gets
mmengine's ``Runner`` and its behaviour; nothing of mmengine is altered for other code in the
process.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from typing import Any

import torch
from mmengine.config import Config
from mmengine.logging import MMLogger
from mmengine.model import is_model_wrapper
from mmengine.runner import Runner
from torch.utils.data import DataLoader

from mlkd.datasets.dataset_wrappers import KeyedDataset
from mlkd.registry import RUNNERS
from mlkd.utils.checkpoint import ATOMIC_LOCAL_BACKEND, CheckpointMismatchError

__all__ = ['MLKDRunner', 'build_runner']


def build_runner(cfg: Config) -> Runner:
    """The runner ``cfg`` names (``runner_type``), else mmengine's ``Runner``, from ``cfg``.

    What mmpretrain's tools do with ``RUNNERS.build(cfg)``, except that the name is looked up in
    mlkd's registry (and its parents: ``Runner``, ``FlexibleRunner``) whatever default scope an
    earlier runner in the process left current.

    Raises:
        KeyError: naming ``runner_type`` when no registered runner has that name.
    """
    runner_type = cfg.get('runner_type')
    if runner_type is None:
        return Runner.from_cfg(cfg)
    runner_cls = RUNNERS.get(runner_type) if isinstance(runner_type, str) else runner_type
    if runner_cls is None:
        raise KeyError(f'runner_type={runner_type!r} is not a registered runner')
    return runner_cls.from_cfg(cfg)


def _fetches_sample_keys(dataset: Any) -> bool:
    """Whether a loader config's ``dataset`` (a config dict or a built dataset) is keyed."""
    if isinstance(dataset, Mapping):
        return dataset.get('type') in (KeyedDataset, 'KeyedDataset', 'mlkd.KeyedDataset')
    return bool(getattr(dataset, 'fetches_sample_keys', False))


class _TextOnceConfig(Config):
    """A ``Config`` that formats its text (``pretty_text``) once while its contents stay the same.

    mmengine formats a config's text with yapf every time it needs it: the environment log, the
    runtime-info hook, the config dumped into the work dir and every checkpoint (``meta.cfg``),
    0.1-0.9 s of CPU each. ``pretty_text`` is a function of the config's contents (``to_dict()``)
    and of ``format_python_code``, so the text is kept with the ``repr`` of those (which tells
    ``1``, ``1.0`` and ``True`` apart) and formatted anew when they change.
    """

    @property
    def pretty_text(self) -> str:
        key = (repr(self.to_dict()), self._format_python_code)
        cached = self.__dict__.get('_formatted')
        if cached is None or cached[0] != key:
            cached = (key, super().pretty_text)
            # Config.__setattr__ stores into the config's contents; this is an attribute.
            object.__setattr__(self, '_formatted', cached)
        return cached[1]


@RUNNERS.register_module()
class MLKDRunner(Runner):
    """mmengine's ``Runner`` with strict checkpoint loading, atomic checkpoint saving, keyed sample
    fetching and config text formatted once.

    * **strict loading** (``load_from``, ``--resume``, ``tools/test.py``): a checkpoint that does
      not fit the model (missing or unexpected keys, other shapes) raises
      :class:`~mlkd.utils.checkpoint.CheckpointMismatchError` naming the file and the keys,
      instead of mmengine's warning followed by training or evaluating partly random weights. To
      load a partly fitting checkpoint on purpose (fine-tuning another head), set
      ``load_strict = False`` in the config.
    * **atomic saving**: local checkpoints (``CheckpointHook``'s, which calls
      :meth:`save_checkpoint`) are written to a temporary file and renamed into place
      (:class:`~mlkd.utils.checkpoint.AtomicLocalBackend`), so a crash or a full disk while
      saving leaves no truncated ``epoch_N.pth`` and never damages the file being replaced.
      Remote destinations and explicit ``backend_args`` are mmengine's. Two files that
      ``CheckpointHook`` writes itself are mmengine's too, written in place: the
      ``last_checkpoint`` pointer (one line naming the newest checkpoint) and, with
      ``published_keys`` set (no shipped config sets it), the published copy
      ``epoch_N-<sha256>.pth`` made after training from the complete checkpoint, which stays
      intact whatever happens to the copy.
    * **keyed fetch**: every data loader's dataset is wrapped in
      :class:`~mlkd.datasets.KeyedDataset`, which fetches the indices of
      :class:`~mlkd.datasets.EpochKeyedSampler` under the random state of (seed, epoch, index)
      (``docs/reproducibility.md``) and names the sample whose loading fails.
    * **config text formatted once** while the config is unchanged (:class:`_TextOnceConfig`):
      the checkpoints' ``meta.cfg`` and the dumped config are the same text, byte for byte.
    * **a timestamp of its own**: a runner built in the same second as an earlier one of this
      process gets ``<timestamp>_1`` (``_2``, ...), in its experiment name and its log folder
      (:meth:`setup_env`).
    """

    def __init__(self, *args, cfg: Config | Mapping | None = None, **kwargs) -> None:
        if isinstance(cfg, Config) and not isinstance(cfg, _TextOnceConfig):
            text_once = _TextOnceConfig.__new__(_TextOnceConfig)
            text_once.__setstate__(cfg.__getstate__())
            cfg = text_once
        elif isinstance(cfg, Mapping):
            cfg = _TextOnceConfig(dict(cfg))
        super().__init__(*args, cfg=cfg, **kwargs)

    def setup_env(self, env_cfg: dict) -> None:
        """mmengine's, then a timestamp that no earlier runner of this process has used.

        mmengine names a run's logger, visualizer, message hub and default scope
        ``<config>_<timestamp>`` to the second, and returns the existing instance for a name it
        has seen: a second run of the same config started within that second (a script or a
        notebook running two stages, a fast test) would log into the first run's files and its
        scalars would be lost to its own work dir.
        """
        super().setup_env(env_cfg)
        # ManagerMixin keeps every named instance in this class-level dict (mmengine 0.10).
        taken = MMLogger._instance_dict
        base, count = self._timestamp, 0
        while any(name.endswith(self._timestamp) for name in taken):
            count += 1
            self._timestamp = f'{base}_{count}'

    @staticmethod
    def build_dataloader(
        dataloader: DataLoader | Mapping,
        seed: int | None = None,
        diff_rank_seed: bool = False,
    ) -> DataLoader:
        """mmengine's ``Runner.build_dataloader`` with the dataset wrapped in
        :class:`~mlkd.datasets.KeyedDataset`, whether the loader config gives the dataset as a
        config dict or as a built dataset (one that fetches sample keys already, such as a
        ``KeyedDataset`` the config writes itself, is kept as it is).

        Args:
            dataloader: a built ``DataLoader`` (returned as it is) or its config.
            seed: the random seed of the sampler and the workers (mmengine's).
            diff_rank_seed: give each rank another seed (mmengine's).
        """
        dataset = dataloader.get('dataset') if isinstance(dataloader, Mapping) else None
        if dataset is not None and not _fetches_sample_keys(dataset):
            dataloader = copy.copy(dataloader)
            # A config is built (and fully initialised) by mmengine, as the dataset alone was.
            as_config = isinstance(dataset, Mapping)
            dataloader['dataset'] = (
                dict(type=KeyedDataset, dataset=dataset) if as_config else KeyedDataset(dataset)
            )
        return Runner.build_dataloader(dataloader, seed=seed, diff_rank_seed=diff_rank_seed)

    def load_checkpoint(
        self,
        filename: str,
        map_location: str | torch.device | Callable = 'cpu',
        strict: bool | None = None,
        revise_keys: list = [(r'^module\.', '')],  # noqa: B006 - mmengine's; never mutated
    ) -> dict:
        """mmengine's ``Runner.load_checkpoint`` with ``strict`` defaulting to the config's
        ``load_strict`` (True when unset), and a mismatch reported with the file's name.

        Args:
            filename: the checkpoint (a local path or a URL mmengine can read).
            map_location: where tensors are loaded (``torch.load``'s; mmengine's default
                ``'cpu'``).
            strict: refuse a checkpoint that does not fit the model exactly (default: the
                config's ``load_strict``, else True).
            revise_keys: ``(pattern, replacement)`` applied to the checkpoint's keys (mmengine's:
                a DDP ``module.`` prefix removed).

        Returns:
            the loaded checkpoint.

        Raises:
            CheckpointMismatchError: naming the file and listing mmengine's report (unexpected
                and missing keys, size mismatches) and the opt-out.
        """
        if strict is None:
            strict = bool(self.cfg.get('load_strict', True))
        try:
            return super().load_checkpoint(
                filename, map_location=map_location, strict=strict, revise_keys=revise_keys
            )
        except RuntimeError as error:
            if 'do not match exactly' not in str(error):
                raise
            model = self.model.module if is_model_wrapper(self.model) else self.model
            hint = (
                'To load the matching part only (e.g. to fine-tune), set load_strict=False '
                '(--cfg-options load_strict=False).'
            )
            if 'student.' in str(error) and not hasattr(model, 'student'):
                # The commonest case: a plain classifier config given a distiller checkpoint.
                hint = (
                    'It is a distiller checkpoint (its weights are under "student." and '
                    '"teacher."): evaluate it with the distiller config it was trained with, or '
                    'extract the student first: python tools/export_student.py '
                    f'{filename} student.pth'
                )
            elif hasattr(model, 'student') and re.search(
                r'unexpected key in source state_dict: (?!student\.|teachers?\.)', str(error)
            ):
                # The reverse: a distiller config given a plain classifier's checkpoint.
                hint = (
                    'It is a plain classifier checkpoint (no "student." weights): evaluate it '
                    "with that classifier's own config (the one this distiller names as "
                    "model.student, for a student), or give the distillation run's checkpoint"
                )
            raise CheckpointMismatchError(
                f'checkpoint {filename!r} does not fit the model ({type(model).__name__}):\n'
                f'{str(error).strip()}\n{hint}'
            ) from None

    def save_checkpoint(
        self,
        out_dir: str,
        filename: str,
        file_client_args: dict | None = None,
        save_optimizer: bool = True,
        save_param_scheduler: bool = True,
        meta: dict | None = None,
        by_epoch: bool = True,
        backend_args: dict | None = None,
    ) -> None:
        """mmengine's ``Runner.save_checkpoint``, writing a local file atomically. Its whole
        signature, not ``**kwargs``: mmengine's CheckpointHook passes ``file_client_args`` by
        position."""
        if file_client_args is None and backend_args is None and '://' not in str(out_dir):
            backend_args = dict(backend=ATOMIC_LOCAL_BACKEND)
        super().save_checkpoint(
            out_dir,
            filename,
            file_client_args=file_client_args,
            save_optimizer=save_optimizer,
            save_param_scheduler=save_param_scheduler,
            meta=meta,
            by_epoch=by_epoch,
            backend_args=backend_args,
        )
