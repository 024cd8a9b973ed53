# mdistiller CIFAR recipe: SGD lr 0.05 (0.01 for ShuffleNet/MobileNet students), momentum 0.9,
# weight decay 5e-4, batch 64, 240 epochs, x0.1 at 150/180/210.
# GuardedOptimWrapper (mlkd): a step with NaN / inf gradients is never applied, nor one whose
# total loss is NaN / inf or exploded when the model has no model.loss_guard of its own.
optim_wrapper = dict(
    type='GuardedOptimWrapper',
    loss_guard=dict(divergence_factor=1e4, reference_iters=10),
    optimizer=dict(type='SGD', lr=0.05, momentum=0.9, weight_decay=5e-4),
)
param_scheduler = [dict(type='MultiStepLR', milestones=[150, 180, 210], gamma=0.1, by_epoch=True)]
train_cfg = dict(by_epoch=True, max_epochs=240, val_interval=1)
val_cfg = dict()
test_cfg = dict()
auto_scale_lr = dict(base_batch_size=64, enable=False)
