# What every stage of the ranking benchmark shares (docs/benchmarks/ranking_search.md):
# DigitScenes data, the runtime, and the students' recipe (plain and distilled: one-cycle Adam,
# batch 64, BCE-sum); the teacher's leaf says how its recipe differs.
_base_ = [
    '../datasets/digit_scenes.py',
    '../schedules/onecycle_12e_demo.py',
    '../default_runtime.py',
]
default_hooks = dict(logger=dict(interval=10))
# A seed sets the data order and the augmentation (tools' --seeds go here); every run starts from
# the same initialisation (randomness.seed, 0), so a distilled student and the plain student of a
# seed differ only by what distillation adds.
seed_key = 'train_dataloader.sampler.seed'
# CPU speed: channels-last inputs (oneDNN's convolutions of these small networks are faster).
data_preprocessor = dict(channels_last=True)
student_epochs = 15
student_peak_lr = 2e-3
optim_wrapper = dict(optimizer=dict(lr=student_peak_lr))
param_scheduler = [
    dict(
        _base_.param_scheduler[0],
        eta_max=student_peak_lr,
        total_steps=student_epochs,
        end=student_epochs,
    ),
    dict(_base_.param_scheduler[1], total_steps=student_epochs, end=student_epochs),
]
train_cfg = dict(max_epochs=student_epochs, val_interval=student_epochs)
