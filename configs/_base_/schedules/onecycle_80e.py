# ASL / L2D / 3D recipe: Adam (coupled L2 weight decay 1e-4, not on biases, norm layers or other
# 1-D parameters), one-cycle learning rate with max 1e-4 and 20% warm-up, stepped per iteration,
# and Adam's beta1 cycled 0.95 -> 0.85 -> 0.95 exactly as torch's OneCycleLR does.
# OneCycleLRWithMultipliers is MMEngine's OneCycleLR with each parameter group's peak scaled by its
# paramwise_cfg lr_mult (MMEngine's sets one rate on every group, undoing lr_mult); without lr_mult
# it is the same schedule, bit for bit.
# `end` is set explicitly: otherwise mmengine fills it with train_cfg.max_epochs, stores it in the
# scheduler state, and a run resumed with more epochs (or a teacher stopped at 30 of 80, then
# continued) would stop scheduling at the old end.
max_lr = 1e-4
schedule_epochs = 80

# GuardedOptimWrapper (mlkd): a step with NaN / inf gradients is never applied, nor one whose
# total loss is NaN / inf or exploded when the model has no model.loss_guard of its own.
optim_wrapper = dict(
    type='GuardedOptimWrapper',
    loss_guard=dict(divergence_factor=1e4, reference_iters=10),
    optimizer=dict(type='Adam', lr=max_lr, betas=(0.95, 0.999), weight_decay=1e-4),
    paramwise_cfg=dict(bias_decay_mult=0.0, norm_decay_mult=0.0, flat_decay_mult=0.0),
)
param_scheduler = [
    dict(
        type='OneCycleLRWithMultipliers',
        eta_max=max_lr,
        total_steps=schedule_epochs,
        end=schedule_epochs,
        pct_start=0.2,
        by_epoch=True,
        convert_to_iter_based=True,
    ),
    dict(
        type='OneCycleMomentum',
        base_momentum=0.85,
        max_momentum=0.95,
        total_steps=schedule_epochs,
        end=schedule_epochs,
        pct_start=0.2,
        by_epoch=True,
        convert_to_iter_based=True,
    ),
]
train_cfg = dict(by_epoch=True, max_epochs=schedule_epochs, val_interval=1)
val_cfg = dict()
test_cfg = dict()
# Runs scale the learning rate by batch size only when asked (--auto-scale-lr); base batch 64.
auto_scale_lr = dict(base_batch_size=64, enable=False)
