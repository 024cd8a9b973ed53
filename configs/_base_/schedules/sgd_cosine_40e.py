# Two-way loss recipe on MS-COCO / NUS-WIDE (Kobayashi, "Two-way Multi-Label Loss", CVPR 2023;
# docs/methods.md §2.1, official code): SGD with Nesterov momentum 0.9, weight decay 1e-4, learning
# rate 0.01 for the classifier's fc and 0.01 x 0.1 for every other layer, cosine decay to 0 stepped
# per iteration, 40 epochs, global batch 512 (4 GPUs x 128: the dataset bases set 128 per GPU).
# GuardedOptimWrapper (mlkd): a step with NaN / inf gradients is never applied, nor one whose
# total loss is NaN / inf or exploded when the model has no model.loss_guard of its own.
optim_wrapper = dict(
    type='GuardedOptimWrapper',
    loss_guard=dict(divergence_factor=1e4, reference_iters=10),
    optimizer=dict(type='SGD', lr=0.01, momentum=0.9, nesterov=True, weight_decay=1e-4),
    paramwise_cfg=dict(custom_keys={'backbone': dict(lr_mult=0.1)}),
)
param_scheduler = [
    dict(
        type='CosineAnnealingLR',
        T_max=40,
        eta_min=0.0,
        by_epoch=True,
        begin=0,
        end=40,
        convert_to_iter_based=True,
    )
]
train_cfg = dict(by_epoch=True, max_epochs=40, val_interval=1)
val_cfg = dict()
test_cfg = dict()
# Runs on fewer GPUs scale the learning rate only when asked (--auto-scale-lr).
auto_scale_lr = dict(base_batch_size=512, enable=False)
