# reviewkd_mdistiller.py for networks with three tapped stages.
_base_ = ['./reviewkd_3stages.py']
__targets = ['t_preact1', 't_preact2', 't_preact3', 't_pool']
method = dict(
    connectors=dict(s_abf=dict(target=__targets)),
    distill_losses=dict(reviewkd=dict(inputs=dict(t_feats=__targets))),
)
