# VID (Ahn et al., CVPR 2019; docs/methods.md 5.6.5), mdistiller's settings: every stage after
# the stem, three-conv mean regressor per stage (connector), initial variance 5, feature weight 1,
# CE 1. The variances (one per teacher channel) are sized from the probe of `t_feats`' sources.
# Four tapped stages; vid_3stages.py for three.
method = dict(
    connectors=dict(
        s_vid=dict(
            type='VIDRegressorConnector',
            source=['s_stage1', 's_stage2', 's_stage3', 's_stage4'],
            target=['t_stage1', 't_stage2', 't_stage3', 't_stage4'],
        )
    ),
    distill_losses=dict(
        vid=dict(
            type='VIDLoss',
            init_var=5.0,
            loss_weight=1.0,
            inputs=dict(s_feats='s_vid', t_feats=['t_stage1', 't_stage2', 't_stage3', 't_stage4']),
        )
    ),
)
