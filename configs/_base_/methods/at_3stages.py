# at.py for networks with three tapped stages (`stage1..3`: the CIFAR ResNets, WRNs, ShuffleNets).
_base_ = ['./at.py']
method = dict(
    distill_losses=dict(
        at=dict(
            inputs=dict(
                s_feats=['s_stage1', 's_stage2', 's_stage3'],
                t_feats=['t_stage1', 't_stage2', 't_stage3'],
            )
        )
    )
)
