# Multi-level logit distillation (Jin et al., CVPR 2023; docs/methods.md 5.3, 5.6.9) on one view:
# instance, class and batch levels over temperatures (4, 3, 5, 2, 6), confidence masks scaled by
# the kept fraction ('scalar', official), weight 1, CE 1. The official two-view (strong
# augmentation) recipe is not reproduced by these configs. Compares samples (global batch
# under DDP).
method = dict(
    distill_losses=dict(
        mlld=dict(
            type='MLLDLoss',
            temperatures=(4.0, 3.0, 5.0, 2.0, 6.0),
            mask_mode='scalar',
            loss_weight=1.0,
        )
    ),
)
