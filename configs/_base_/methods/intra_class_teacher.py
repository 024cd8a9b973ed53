# The intra-class contrastive teacher of "Enriching Knowledge Distillation with Intra-Class
# Contrastive Learning" (anonymous ICLR submission; docs/methods.md §5.5): a classifier (the leaf
# sets `model.classifier` to the plain teacher's config) trained with CE + λ·L_intra under
# ClassifierWithLosses on two-view batches (an *_anchor_positive.py dataset): the anchor is the
# main view, whose CE is the task loss; the positive runs through the network again. λ = 0.02, the
# middle of the paper's range [0.01, 0.03]. The loss's settings, written out (paper-literal where
# the paper speaks; docs/methods.md §5.5.4 for the rest): the logits as the embedding f, no
# L2 normalisation, T = 1, margin threshold δ = 0.5 (the paper gives none), negatives = every
# same-class sample, the per-class pipeline cache of §3.3 with queues of 16 (the paper gives no
# size), Σ over anchors / batch size.
method = dict(
    type='ClassifierWithLosses',
    # NaN / inf or exploding losses stop the run before the step, naming the terms.
    loss_guard=dict(divergence_factor=1e4, reference_iters=10),
    classifier=None,
    views=dict(anchor=0, positive=1),
    losses=dict(
        intra=dict(
            type='IntraClassContrastiveLoss',
            loss_weight=0.02,
            margin_threshold=0.5,
            temperature=1.0,
            normalize=False,
            negatives='all',
            reduction='batch',
            queue_size=16,
            inputs=dict(anchor='logits', positive='positive_logits'),
        )
    ),
)
