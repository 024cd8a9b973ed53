# RKD (Park et al., CVPR 2019; docs/methods.md 5.6.1) on the pooled backbone features, with
# mdistiller's CIFAR settings: distance weight 25, angle weight 50, feature weight 1, CE 1.
# Pair-independent. Compares samples: under DDP the embeddings are all-gathered (global batch).
method = dict(
    # Parameter-free global average pooling of each backbone output (ML-Decoder heads have no
    # neck, so there is no `s_pooled`; for necked CIFAR nets this equals the neck output).
    connectors=dict(
        s_emb=dict(type='GlobalPoolConnector', source='s_feats'),
        t_emb=dict(type='GlobalPoolConnector', source='t_feats'),
    ),
    distill_losses=dict(
        rkd=dict(
            type='RKDLoss',
            distance_weight=25.0,
            angle_weight=50.0,
            loss_weight=1.0,
            inputs=dict(s_pooled='s_emb', t_pooled='t_emb'),
        )
    ),
)
