"""Open a distiller's teacher caches for the run and bracket each training epoch."""

from __future__ import annotations

from mmengine.hooks import Hook
from mmengine.runner import EpochBasedTrainLoop

from mlkd.models.utils import unwrap_model
from mlkd.registry import HOOKS
from mlkd.teacher_cache import (
    TeacherCacheError,
    TeacherOutputCache,
    run_fingerprint,
    teacher_precision,
    train_sampler,
)


@HOOKS.register_module()
class TeacherCacheHook(Hook):
    """Drive the teacher caches of a distiller (``model.teacher_cache``: each teacher source
    that writes or reads a :class:`~mlkd.teacher_cache.TeacherOutputCache`,
    :mod:`mlkd.models.distillers.teacher_source`).

    Does nothing for a model without a cache, so the shipped distillation configs list it
    and ``--cfg-options model.teacher_cache.dir=DIR model.teacher_cache.mode=write`` (or ``read``)
    is all a user adds. ``before_train`` checks that the run's augmentations are keyed by (seed,
    epoch, index) and opens each cache with the run's fingerprint (teacher weights, dataset and
    pipeline, seed, teacher precision); ``before_train_epoch`` starts the epoch the sampler is at
    (after ``DistSamplerSeedHook`` has set it: lower priority); ``after_train_epoch`` commits the
    written shards before the checkpoint of that epoch is saved (higher priority than
    ``CheckpointHook``), so a resumed write run never lacks an epoch it has passed.
    """

    priority = 'LOW'

    @staticmethod
    def _caches(runner) -> list[TeacherOutputCache]:
        sources = getattr(unwrap_model(runner.model), 'teacher_sources', {})
        return [source.cache for source in sources.values() if source.cache is not None]

    def before_train(self, runner) -> None:
        model = unwrap_model(runner.model)
        sources = {
            name: source
            for name, source in getattr(model, 'teacher_sources', {}).items()
            if source.cache is not None
        }
        if not sources:
            return
        if not isinstance(runner.train_loop, EpochBasedTrainLoop):
            raise TeacherCacheError(
                f'teacher cache: needs an epoch-based training loop, got '
                f'{type(runner.train_loop).__name__}'
            )
        for name, source in sources.items():
            fingerprint = run_fingerprint(
                model,
                runner.train_dataloader,
                runner.cfg.get('train_dataloader', {}).get('dataset'),
                teacher_precision(runner.optim_wrapper),
                source=source,
            )
            source.cache.open(fingerprint, source.output_names, source.tap_paths)
            runner.logger.info(
                f'{name}: {source.cache}: '
                f'{"writing" if source.cache.mode == "write" else "reading"} teacher outputs '
                f'{source.output_names}; epochs in the cache: {source.cache.epochs_written}'
            )

    def before_train_epoch(self, runner) -> None:
        caches = self._caches(runner)
        if not caches:
            return
        sampler = train_sampler(runner.train_dataloader)
        for cache in caches:
            cache.begin_epoch(
                sampler.epoch, len(sampler), epochs_ahead=runner.max_epochs - runner.epoch
            )

    def after_train_epoch(self, runner) -> None:
        for cache in self._caches(runner):
            cache.end_epoch()

    def after_train(self, runner) -> None:
        for cache in self._caches(runner):
            cache.close()
