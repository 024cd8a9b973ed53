# The inputs of the relational methods on the pooled backbone features (pkt.py, rkd.py): a
# parameter-free global average pooling of each backbone output (ML-Decoder heads have no neck, so
# there is no `s_pooled`; for necked CIFAR nets this equals the neck output), `s_emb` / `t_emb`.
method = dict(
    connectors=dict(
        s_emb=dict(type='GlobalPoolConnector', source='s_feats'),
        t_emb=dict(type='GlobalPoolConnector', source='t_feats'),
    ),
)
