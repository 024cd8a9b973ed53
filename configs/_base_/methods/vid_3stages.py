# vid.py for networks with three tapped stages.
_base_ = ['./vid.py']
method = dict(
    connectors=dict(
        s_vid=dict(
            source=['s_stage1', 's_stage2', 's_stage3'], target=['t_stage1', 't_stage2', 't_stage3']
        )
    ),
    distill_losses=dict(vid=dict(inputs=dict(t_feats=['t_stage1', 't_stage2', 't_stage3']))),
)
