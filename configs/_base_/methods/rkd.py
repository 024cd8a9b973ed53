# RKD (Park et al., CVPR 2019; docs/methods.md 5.6.1) on the pooled backbone features, with
# mdistiller's CIFAR settings: distance weight 25, angle weight 50, feature weight 1, CE 1.
# Pair-independent. Compares samples: under DDP the embeddings are all-gathered (global batch).
# Inputs: the pooled embeddings of pooled_embeddings.py.
_base_ = ['./pooled_embeddings.py']
method = dict(
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
