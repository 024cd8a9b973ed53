# PKT (Passalis & Tefas, ECCV 2018; docs/methods.md 5.6.2) on the pooled backbone features, with
# mdistiller's CIFAR settings: feature weight 30000 (the loss is a mean over B^2 pairs), CE 1.
# Pair-independent. Compares samples: under DDP the embeddings are all-gathered (global batch).
# Inputs: the pooled embeddings of pooled_embeddings.py.
_base_ = ['./pooled_embeddings.py']
method = dict(
    distill_losses=dict(
        pkt=dict(
            type='PKTLoss', loss_weight=30000.0, inputs=dict(s_pooled='s_emb', t_pooled='t_emb')
        )
    ),
)
