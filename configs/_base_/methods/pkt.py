# PKT (Passalis & Tefas, ECCV 2018; docs/methods.md 5.6.2) on the pooled backbone features, with
# mdistiller's CIFAR settings: feature weight 30000 (the loss is a mean over B^2 pairs), CE 1.
# Pair-independent. Compares samples: under DDP the embeddings are all-gathered (global batch).
method = dict(
    # Parameter-free global average pooling of each backbone output (ML-Decoder heads have no
    # neck, so there is no `s_pooled`; for necked CIFAR nets this equals the neck output).
    connectors=dict(
        s_emb=dict(type='GlobalPoolConnector', source='s_feats'),
        t_emb=dict(type='GlobalPoolConnector', source='t_feats'),
    ),
    distill_losses=dict(
        pkt=dict(
            type='PKTLoss', loss_weight=30000.0, inputs=dict(s_pooled='s_emb', t_pooled='t_emb')
        )
    ),
)
