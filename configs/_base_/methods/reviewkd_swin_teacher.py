# reviewkd.py for a Swin teacher: its stage taps are (tokens, (H, W)) pairs, turned into
# [B, C, H, W] maps by parameter-free TokenMapConnectors before the ABF fusion and the loss. The
# maps are the stage outputs before the backbone's output norm (mmpretrain keeps a norm only for
# the output stage). The connectors are listed anew (`_delete_`) so that the maps come first
# (connectors run in order); reviewkd.py's pooling and ABF follow, the ABF targeting the maps.
_base_ = ['./reviewkd.py']
method = dict(
    connectors=dict(
        _delete_=True,
        t_map1=dict(type='TokenMapConnector', source='t_stage1'),
        t_map2=dict(type='TokenMapConnector', source='t_stage2'),
        t_map3=dict(type='TokenMapConnector', source='t_stage3'),
        t_map4=dict(type='TokenMapConnector', source='t_stage4'),
        s_pool=_base_.method.connectors.s_pool,
        t_pool=_base_.method.connectors.t_pool,
        s_abf=dict(
            _base_.method.connectors.s_abf,
            target=['t_map1', 't_map2', 't_map3', 't_map4', 't_pool'],
        ),
    ),
    distill_losses=dict(
        reviewkd=dict(inputs=dict(t_feats=['t_map1', 't_map2', 't_map3', 't_map4', 't_pool']))
    ),
)
