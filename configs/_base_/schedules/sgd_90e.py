# Recipe of "Enriching Knowledge Distillation with Intra-Class Contrastive Learning" (anonymous
# ICLR submission): SGD, 90 epochs, lr x0.1 at epochs 30 and 60 (the text says "reduced three
# times" but lists two milestones; factor 0.1 is mlkd's choice).
optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.05, momentum=0.9, weight_decay=5e-4))
param_scheduler = [dict(type='MultiStepLR', milestones=[30, 60], gamma=0.1, by_epoch=True)]
train_cfg = dict(by_epoch=True, max_epochs=90, val_interval=1)
val_cfg = dict()
test_cfg = dict()
auto_scale_lr = dict(base_batch_size=128, enable=False)
