# Cole et al.'s end-to-end single-positive recipe (docs/methods.md §3.1), which Verelst et al.
# (WACV 2023) build on: Adam, constant learning rate 1e-5, no weight decay, 10 epochs, batch 8 (set
# by the dataset base). Verelst et al.'s main text (their own optimiser settings) is not in the
# sources: this is mlkd's choice for Verelst et al. (WACV 2023) Table B.1, stated in
# configs/spml/README.md. Cole et al. keep the epoch with the best validation mAP; mlkd reports the
# last epoch (the validation set here is the test set).
# weight_decay=0.0 is Adam's default, written out: MMEngine refuses a paramwise_cfg `decay_mult`
# (ROLE's label estimates) when the optimizer has no weight_decay key ("base_wd should not be None").
# GuardedOptimWrapper (mlkd): a step with NaN / inf gradients is never applied, nor one whose
# total loss is NaN / inf or exploded when the model has no model.loss_guard of its own.
optim_wrapper = dict(
    type='GuardedOptimWrapper',
    loss_guard=dict(divergence_factor=1e4, reference_iters=10),
    optimizer=dict(type='Adam', lr=1e-5, weight_decay=0.0),
)
param_scheduler = []
train_cfg = dict(by_epoch=True, max_epochs=10, val_interval=1)
val_cfg = dict()
test_cfg = dict()
auto_scale_lr = dict(base_batch_size=8, enable=False)
