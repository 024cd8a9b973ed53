# ofd.py for networks with three tapped stages.
_base_ = ['./ofd.py']
method = dict(
    connectors=dict(
        s_ofd=dict(
            source=['s_preact1', 's_preact2', 's_preact3'],
            target=['t_preact1', 't_preact2', 't_preact3'],
        )
    ),
    distill_losses=dict(ofd=dict(inputs=dict(t_feats=['t_preact1', 't_preact2', 't_preact3']))),
)
