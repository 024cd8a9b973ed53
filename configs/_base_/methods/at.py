# Attention transfer (Zagoruyko & Komodakis, ICLR 2017; docs/methods.md 5.6.3), mdistiller's
# settings: p = 2 on every stage after the stem, feature weight 1000, CE 1. Written for networks
# with four tapped stages (`stage1..4`, named by the pair base); at_3stages.py for three.
method = dict(
    distill_losses=dict(
        at=dict(
            type='ATLoss',
            p=2.0,
            loss_weight=1000.0,
            inputs=dict(
                s_feats=['s_stage1', 's_stage2', 's_stage3', 's_stage4'],
                t_feats=['t_stage1', 't_stage2', 't_stage3', 't_stage4'],
            ),
        )
    ),
)
