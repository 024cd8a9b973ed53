# OFD (Heo et al., ICCV 2019; docs/methods.md 5.6.6), mdistiller's settings: pre-ReLU features
# (`preact1..4` taps) of every stage after the stem, conv-BN connector per stage, feature weight
# 1e-3, CE 1. Margins from the loaded teacher's BNs before each stage's last ReLU
# (`margin_bns='auto'`: the teacher backbone's bn_before_relu_paths(); a leaf lists the BN paths
# where that method gives other stages than the taps, e.g. VGG). Four stages; ofd_3stages.py for three.
method = dict(
    connectors=dict(
        s_ofd=dict(
            type='OFDConnector',
            source=['s_preact1', 's_preact2', 's_preact3', 's_preact4'],
            target=['t_preact1', 't_preact2', 't_preact3', 't_preact4'],
        )
    ),
    distill_losses=dict(
        ofd=dict(
            type='OFDLoss',
            margin_bns='auto',
            loss_weight=1e-3,
            inputs=dict(
                s_feats='s_ofd', t_feats=['t_preact1', 't_preact2', 't_preact3', 't_preact4']
            ),
        )
    ),
)
