# CRD (Tian et al., ICLR 2020; docs/methods.md 5.6.7): 128-d embedding heads on the pooled
# backbone features of both networks, two memory banks of the training-set size, 16384 uniform
# negatives, T = 0.07, momentum 0.5, feature weight 0.8, CE 1 (mdistiller / RepDistiller).
# `num_samples` (rows of each bank) is the training-set size: a leaf sets it from the dataset
# config's `num_train_samples`:  model.distill_losses.crd.num_samples = _base_.num_train_samples
# Memory: 2 banks x N x 128 x 4 bytes: CIFAR-100 (N = 50,000) 51.2 MB, Tiny ImageNet (100,000)
# 102.4 MB, COCO train2014 (82,783) 84.8 MB.
method = dict(
    connectors=dict(
        s_pool=dict(type='GlobalPoolConnector', source='s_feats'),
        t_pool=dict(type='GlobalPoolConnector', source='t_feats'),
        s_embed=dict(type='EmbedConnector', source='s_pool', out_channels=128),
        t_embed=dict(type='EmbedConnector', source='t_pool', out_channels=128),
    ),
    distill_losses=dict(
        crd=dict(
            type='CRDLoss',
            embed_dim=128,
            num_negatives=16384,
            temperature=0.07,
            momentum=0.5,
            loss_weight=0.8,
            inputs=dict(s_pooled='s_embed', t_pooled='t_embed'),
        )
    ),
)
