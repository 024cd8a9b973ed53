# Student recipe of "Enriching Knowledge Distillation with Intra-Class Contrastive Learning"
# (anonymous ICLR submission, §5.1): SGD, base lr 0.05 for a global batch of 128, 90 epochs,
# multi-step decay at epochs 30 and 60. What the paper leaves out is mlkd's choice, as in the
# common CIFAR-KD code bases (CRD / RepDistiller, mdistiller): momentum 0.9, weight decay 5e-4
# (the paper is silent on weight decay), decay factor 0.1 (the text says the lr is "reduced three
# times" yet lists two milestones). The teacher recipe (global batch 256, lr 0.5) is
# sgd_90e_teacher.py.
#
# GPU count: the dataloader's batch_size is per GPU, so the global batch is GPUs x batch_size.
# As in the other recipes, `auto_scale_lr.base_batch_size` is the paper's global batch and scaling
# is off: on N GPUs either set the per-GPU batch to 128 / N (same global batch, the paper's lr) or
# keep it and pass `--auto-scale-lr` to tools/train.py, which multiplies the lr by
# N x batch_size / 128 (linear scaling).
# GuardedOptimWrapper (mlkd): a step with NaN / inf gradients is never applied, nor one whose
# total loss is NaN / inf or exploded when the model has no model.loss_guard of its own.
optim_wrapper = dict(
    type='GuardedOptimWrapper',
    loss_guard=dict(divergence_factor=1e4, reference_iters=10),
    optimizer=dict(type='SGD', lr=0.05, momentum=0.9, weight_decay=5e-4),
)
param_scheduler = [dict(type='MultiStepLR', milestones=[30, 60], gamma=0.1, by_epoch=True)]
train_cfg = dict(by_epoch=True, max_epochs=90, val_interval=1)
val_cfg = dict()
test_cfg = dict()
auto_scale_lr = dict(base_batch_size=128, enable=False)
