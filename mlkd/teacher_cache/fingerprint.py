"""What a teacher's outputs depend on: the fingerprint a cache records and every reader checks."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import torch

from mlkd.utils.fingerprint import fingerprint

from .keying import check_no_batch_augments, keyed_sampling_seed


def teacher_weights_sha256(network: torch.nn.Module) -> str:
    """sha256 of a network's state dict (names, dtypes, shapes and bytes, in order).

    Hashing the loaded weights rather than the checkpoint file identifies the teacher however it
    was stored (a work dir, an mmpretrain or a distiller checkpoint).
    """
    digest = hashlib.sha256()
    _update_with_tensors(digest, network.state_dict())
    return digest.hexdigest()


#: The settings of mmpretrain's data preprocessors that change the tensors a network receives
#: (besides their mean / std buffers).
PREPROCESSOR_SETTINGS = (
    '_channel_conversion',
    '_enable_normalize',
    'pad_size_divisor',
    'pad_value',
)


def preprocessor_sha256(preprocessor: torch.nn.Module) -> str:
    """sha256 of what a data preprocessor does to the teacher's inputs: its type, its tensors
    (mean, std) and :data:`PREPROCESSOR_SETTINGS` (channel order, normalisation, padding). A run
    that normalises otherwise gets other teacher outputs."""
    digest = hashlib.sha256(type(preprocessor).__name__.encode())
    _update_with_tensors(digest, dict(preprocessor.named_buffers()))  # mean / std: not persistent
    settings = {
        k: getattr(preprocessor, k) for k in PREPROCESSOR_SETTINGS if hasattr(preprocessor, k)
    }
    digest.update(repr(sorted(settings.items())).encode())
    return digest.hexdigest()


def _update_with_tensors(digest: Any, state: Mapping[str, torch.Tensor]) -> None:
    """Feed names, dtypes, shapes and bytes of ``state``'s tensors, in order, to ``digest``."""
    for name, value in state.items():
        value = value.detach().cpu().contiguous()
        digest.update(f'{name}|{value.dtype}|{tuple(value.shape)}|'.encode())
        digest.update(value.reshape(-1).view(torch.uint8).numpy().tobytes())


def dataset_sha256(dataset_cfg: Mapping | None, dataset: Any) -> str:
    """sha256 of a training dataset's config (its :func:`~mlkd.utils.fingerprint.fingerprint`,
    pipeline included), length and sample list.

    The sample list is each sample's file path (``img_path``) where the dataset has one: a dataset
    config that reads a changed annotation file is then told apart. In-memory datasets
    (MultiDigits) are determined by their config.
    """
    digest = hashlib.sha256(fingerprint(dataset_cfg or {}, ignore=()).encode())
    digest.update(f'|{len(dataset)}|'.encode())
    data_list = getattr(dataset, 'data_list', None)
    if isinstance(data_list, list):
        paths = [info.get('img_path') for info in data_list if isinstance(info, dict)]
        if any(paths):
            digest.update('\n'.join(map(str, paths)).encode())
    return digest.hexdigest()


def teacher_precision(optim_wrapper: Any = None, amp_dtype: torch.dtype | None = None) -> str:
    """``'float32'``, or ``'autocast-<dtype>'`` when the teacher runs under autocast (an
    ``AmpOptimWrapper`` such as ``MixedPrecisionOptimWrapper``, or ``amp_dtype`` given)."""
    if amp_dtype is None and optim_wrapper is not None:
        from mmengine.optim import AmpOptimWrapper

        if isinstance(optim_wrapper, AmpOptimWrapper):
            amp_dtype = getattr(optim_wrapper, 'cast_dtype', None) or torch.float16
    return 'float32' if amp_dtype is None else f'autocast-{str(amp_dtype).replace("torch.", "")}'


def run_fingerprint(
    distiller: Any,
    loader: Any,
    dataset_cfg: Mapping | None,
    precision: str,
    channels_last: bool = False,
    source: Any = None,
) -> dict[str, Any]:
    """What a distiller's teacher outputs depend on, for the manifest (checks the keying too).

    Args:
        distiller: the distiller (its data preprocessor and teacher source).
        loader: the training data loader (sampler, dataset).
        dataset_cfg: the config the training dataset was built from (pipeline included).
        precision: :func:`teacher_precision` of the teacher forward.
        channels_last: whether the teacher was made to run on channels-last inputs (other
            kernels, other rounding: a cache written so is refused by a run whose teacher does
            not). A data preprocessor with ``channels_last=True`` hands every network such
            inputs, so it counts too.
        source: the :class:`~mlkd.models.distillers.teacher_source.TeacherSource` whose outputs
            are cached (its network and input view); default ``distiller.teacher_source``, the
            one teacher of a :class:`~mlkd.models.distillers.SingleTeacherDistiller`.
    """
    source = distiller.teacher_source if source is None else source
    seed = keyed_sampling_seed(loader)
    check_no_batch_augments(distiller.data_preprocessor)
    return dict(
        teacher_weights_sha256=teacher_weights_sha256(source.network),
        preprocessor_sha256=preprocessor_sha256(distiller.data_preprocessor),
        dataset_sha256=dataset_sha256(dataset_cfg, loader.dataset),
        seed=seed,
        teacher_view=source.view,
        teacher_precision=precision,
        teacher_channels_last=bool(
            channels_last or getattr(distiller.data_preprocessor, 'channels_last', False)
        ),
    )
