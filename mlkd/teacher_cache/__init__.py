"""The exact on-disk cache of a frozen teacher's outputs (see :mod:`.fingerprint`)."""

from .fingerprint import (
    CACHE_DTYPES,
    CACHE_MODES,
    TeacherCacheError,
    TeacherOutputCache,
    check_no_batch_augments,
    dataset_sha256,
    keyed_sampling_seed,
    run_fingerprint,
    teacher_precision,
    teacher_weights_sha256,
    train_sampler,
    written_epochs,
)

__all__ = [
    'CACHE_DTYPES',
    'CACHE_MODES',
    'TeacherCacheError',
    'TeacherOutputCache',
    'check_no_batch_augments',
    'dataset_sha256',
    'keyed_sampling_seed',
    'run_fingerprint',
    'teacher_precision',
    'teacher_weights_sha256',
    'train_sampler',
    'written_epochs',
]
