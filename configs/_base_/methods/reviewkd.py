# ReviewKD (Chen et al., CVPR 2021; docs/methods.md 5.6.8), mdistiller's settings: levels = every
# stage after the stem plus the pooled feature as a 1x1 map; ABF fusion (connector) with
# mid width min(512, last student width), outputs resized to the teacher's sides; HCL with pyramid
# (4, 2, 1), feature weight 1 (ResNet8x4 students 5: set in those leaves), warm-up 20 epochs, CE 1.
# Four tapped stages; reviewkd_3stages.py for three, reviewkd_swin_teacher.py for Swin teachers.
method = dict(
    connectors=dict(
        s_pool=dict(type='GlobalPoolConnector', keepdim=True, source='s_feats'),
        t_pool=dict(type='GlobalPoolConnector', keepdim=True, source='t_feats'),
        s_abf=dict(
            type='ABFConnector',
            source=['s_stage1', 's_stage2', 's_stage3', 's_stage4', 's_pool'],
            target=['t_stage1', 't_stage2', 't_stage3', 't_stage4', 't_pool'],
        ),
    ),
    distill_losses=dict(
        reviewkd=dict(
            type='ReviewKDLoss',
            pool_sizes=(4, 2, 1),
            warmup_epochs=20,
            loss_weight=1.0,
            inputs=dict(
                s_feats='s_abf', t_feats=['t_stage1', 't_stage2', 't_stage3', 't_stage4', 't_pool']
            ),
        )
    ),
)
