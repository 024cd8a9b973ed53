# Runtime shared by every mlkd config.
default_scope = 'mlkd'
# mmengine's Runner with strict checkpoint loading, atomic checkpoint saving and the keyed sample
# fetch of EpochKeyedSampler (mlkd/engine/runner.py). A config without runner_type gets mmengine's
# Runner, and EpochKeyedSampler then refuses its dataset.
runner_type = 'MLKDRunner'

default_hooks = dict(
    timer=dict(type='IterTimerHook'),
    logger=dict(type='LoggerHook', interval=50),
    param_scheduler=dict(type='ParamSchedulerHook'),
    checkpoint=dict(type='CheckpointHook', interval=1, max_keep_ckpts=2),
    sampler_seed=dict(type='DistSamplerSeedHook'),
)
# NumClassesCheckHook fails at start-up when a head's num_classes disagrees with the datasets;
# RandomStateHook stores the RNG states in checkpoints so that --resume continues exactly;
# NonFiniteGuardHook stops before a checkpoint of non-finite or exploded weights is written (or a
# finite one rotated away) and before training from a teacher with non-finite outputs (the losses
# and gradients of each step are checked by model.loss_guard and the GuardedOptimWrapper of the
# schedules); LabelCoverageHook warns about classes without positives (and max_epochs=0);
# TeacherScoreHook has a distiller score its teacher on the evaluated data only while a metric
# reads it (DistillFidelity).
custom_hooks = [
    dict(type='NumClassesCheckHook'),
    dict(type='RandomStateHook'),
    dict(type='NonFiniteGuardHook'),
    dict(type='LabelCoverageHook'),
    dict(type='TeacherScoreHook'),
]

env_cfg = dict(
    cudnn_benchmark=False,
    mp_cfg=dict(mp_start_method='fork', opencv_num_threads=0),
    # tools/train.py switches to gloo (and CPU DDP) by itself on hosts without CUDA.
    dist_cfg=dict(backend='nccl'),
)

vis_backends = [dict(type='LocalVisBackend')]
visualizer = dict(type='Visualizer', vis_backends=vis_backends)

log_processor = dict(by_epoch=True)
log_level = 'INFO'
load_from = None
resume = False
randomness = dict(seed=0, deterministic=False)
