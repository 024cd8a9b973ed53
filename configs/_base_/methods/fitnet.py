# FitNet hint (Romero et al., ICLR 2015; docs/methods.md 5.6.4), mdistiller's CIFAR settings:
# hint layer 2 (`stage2` tap, the pair base names it), conv-BN-ReLU regressor sized from the probe,
# feature weight 100, CE 1, hint and task trained jointly.
method = dict(
    connectors=dict(s_hint=dict(type='HintConnector', source='s_stage2', target='t_stage2')),
    distill_losses=dict(
        fitnet=dict(
            type='FitNetLoss', loss_weight=100.0, inputs=dict(s_feats='s_hint', t_feats='t_stage2')
        )
    ),
)
