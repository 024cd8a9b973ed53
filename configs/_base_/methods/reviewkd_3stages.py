# reviewkd.py for networks with three tapped stages.
_base_ = ['./reviewkd.py']
method = dict(
    connectors=dict(
        s_abf=dict(
            source=['s_stage1', 's_stage2', 's_stage3', 's_pool'],
            target=['t_stage1', 't_stage2', 't_stage3', 't_pool'],
        )
    ),
    distill_losses=dict(
        reviewkd=dict(inputs=dict(t_feats=['t_stage1', 't_stage2', 't_stage3', 't_pool']))
    ),
)
