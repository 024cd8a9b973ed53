"""An exact on-disk cache of a frozen teacher's outputs, keyed by (seed, epoch, sample index).

Distillation recomputes the frozen teacher's forward pass on every step. When the augmentation of
sample ``i`` in epoch ``e`` is a pure function of ``(seed, e, i)`` — which
:class:`~mlkd.datasets.EpochKeyedSampler` guarantees for every per-sample pipeline (see
:mod:`mlkd.utils.sample_seed`) — the teacher's outputs for that sample are too, so they can be
computed once (``mode='write'``, or ``tools/cache_teacher.py``) and read back by any number of
student runs (``mode='read'``): a student trained from the cache is bit-identical to one trained
with the live teacher, as long as the cache stores the outputs in the precision the teacher
produced them (``dtype='float32'``, the default; ``float16`` / ``bfloat16`` halve the size and
round the targets).

Layout of a cache folder::

    manifest.json                      what the cache was made from (see below)
    .manifest.lock                     locked around each manifest update (see below)
    epoch_0000/shard_00000_of_00002/   one shard per writing process and epoch
        index.bin                      int64 [rows]: dataset index of each row
        t_logits.bin                   <dtype> [rows, *shape] raw little-endian arrays
        t_stage3.bin                   ... one file per cached teacher tap
        shard.json                     rows and per-tap shapes; written last
    epoch_0001/...

The manifest holds the ``fingerprint`` (sha256 of the teacher's loaded weights, of the data
preprocessor's normalisation, of the training dataset's config, pipeline included, and of its
sample list, the sampler's seed, the teacher's forward precision and memory format), the storage
``dtype``, the ``taps`` with their per-sample shape and the dtype the teacher produced them in,
the teacher module each tap was recorded at (``tap_paths``), and the ``epochs`` written completely
with the number of shards of each. Reading compares every fingerprint field and refuses a mismatch
with a :class:`TeacherCacheError` naming it: a student never trains on another teacher's,
pipeline's or seed's targets, and never silently falls back to the live teacher.

Writes are atomic per shard: a process appends its rows to files in a temporary folder and renames
the folder into place (``os.replace``) when its epoch ends; rank 0 then records the epoch in the
manifest (itself replaced atomically) once every rank's shard exists. A crash leaves either no
shard or a temporary folder, and the epoch is missing from the manifest: reading it is refused.
Under DDP each rank writes its own shard; reading looks rows up by sample index in all shards of
the epoch, so any number of processes can read a cache written by any other number.

Several independent processes may write **disjoint epochs** of one cache folder at the same time
(``tools/demo.py`` fills a seed's epochs in shards side by side): every read-modify-write of the
manifest (creating or checking it in :meth:`TeacherOutputCache.open`, recording an epoch in
:meth:`TeacherOutputCache.end_epoch`) holds the folder's exclusive lock (:mod:`.lock`: a
``filelock.FileLock`` on ``.manifest.lock``, on POSIX and Windows alike) and re-reads the manifest
from disk, so no writer loses another's epochs and no writer takes another's half-created cache for
a foreign folder. Two processes writing the *same* epoch at once are not supported (the later one
removes the other's unfinished shard). The lock is host-local: writers on several hosts sharing
the folder over a network file system are not supported.

Modules: :mod:`.format` (the layout: file names, storage dtypes, JSON files), :mod:`.shards` (one
epoch's rows: the shard a process writes, the reader of all shards), :mod:`.cache` (the session a
run opens: :class:`TeacherOutputCache`), :mod:`.lock`, :mod:`.fingerprint` (what the outputs
depend on) and :mod:`.keying` (whether a run's augmentations are keyed, which makes them
cacheable). A distiller reads its teacher through a teacher source
(:mod:`mlkd.models.distillers.teacher_source`): the live network, or this cache;
:class:`~mlkd.engine.hooks.TeacherCacheHook` and ``tools/cache_teacher.py`` drive the cache.
"""

from .cache import CACHE_MODES, TeacherOutputCache
from .fingerprint import (
    dataset_sha256,
    preprocessor_sha256,
    run_fingerprint,
    teacher_precision,
    teacher_weights_sha256,
)
from .format import CACHE_DTYPES, TeacherCacheError, written_epochs
from .keying import check_no_batch_augments, keyed_sampling_seed, train_sampler

__all__ = [
    'CACHE_DTYPES',
    'CACHE_MODES',
    'TeacherCacheError',
    'TeacherOutputCache',
    'check_no_batch_augments',
    'dataset_sha256',
    'keyed_sampling_seed',
    'preprocessor_sha256',
    'run_fingerprint',
    'teacher_precision',
    'teacher_weights_sha256',
    'train_sampler',
    'written_epochs',
]
