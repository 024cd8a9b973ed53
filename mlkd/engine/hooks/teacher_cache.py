"""Open a distiller's teacher cache for the run and bracket each training epoch."""

from __future__ import annotations

from mmengine.hooks import Hook
from mmengine.runner import EpochBasedTrainLoop

from mlkd.models.utils import unwrap_model
from mlkd.registry import HOOKS
from mlkd.teacher_cache import (
    TeacherCacheError,
    run_fingerprint,
    teacher_precision,
    train_sampler,
)


@HOOKS.register_module()
class TeacherCacheHook(Hook):
    """Drive a distiller's teacher cache (``model.teacher_cache``, a
    :class:`~mlkd.teacher_cache.TeacherOutputCache`).

    Does nothing for a model without an enabled cache, so the shipped distillation configs list it
    and ``--cfg-options model.teacher_cache.dir=DIR model.teacher_cache.mode=write`` (or ``read``)
    is all a user adds. ``before_train`` checks that the run's augmentations are keyed by (seed,
    epoch, index) and opens the cache with the run's fingerprint (teacher weights, dataset and
    pipeline, seed, teacher precision); ``before_train_epoch`` starts the epoch the sampler is at
    (after ``DistSamplerSeedHook`` has set it: lower priority); ``after_train_epoch`` commits the
    written shard before the checkpoint of that epoch is saved (higher priority than
    ``CheckpointHook``), so a resumed write run never lacks an epoch it has passed.
    """

    priority = 'LOW'

    @staticmethod
    def _cache(runner):
        return getattr(unwrap_model(runner.model), 'teacher_cache', None)

    def before_train(self, runner) -> None:
        cache = self._cache(runner)
        if cache is None:
            return
        if not isinstance(runner.train_loop, EpochBasedTrainLoop):
            raise TeacherCacheError(
                f'teacher cache: needs an epoch-based training loop, got '
                f'{type(runner.train_loop).__name__}'
            )
        model = unwrap_model(runner.model)
        fingerprint = run_fingerprint(
            model,
            runner.train_dataloader,
            runner.cfg.get('train_dataloader', {}).get('dataset'),
            teacher_precision(runner.optim_wrapper),
        )
        cache.open(fingerprint, model.teacher_outputs)
        runner.logger.info(
            f'{cache}: {"writing" if cache.mode == "write" else "reading"} '
            f'teacher outputs {model.teacher_outputs}; epochs in the cache: '
            f'{cache.epochs_written}'
        )

    def before_train_epoch(self, runner) -> None:
        cache = self._cache(runner)
        if cache is None:
            return
        sampler = train_sampler(runner.train_dataloader)
        cache.begin_epoch(
            sampler.epoch, len(sampler), epochs_ahead=runner.max_epochs - runner.epoch
        )

    def after_train_epoch(self, runner) -> None:
        cache = self._cache(runner)
        if cache is not None:
            cache.end_epoch()

    def after_train(self, runner) -> None:
        cache = self._cache(runner)
        if cache is not None:
            cache.close()
