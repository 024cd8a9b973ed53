# DKD (Zhao et al., CVPR 2022; docs/methods.md 5.2, 5.6.9), mdistiller's CIFAR defaults: alpha 1,
# beta 8, T = 4, linear warm-up over 20 epochs, CE 1. mdistiller lowers beta per pair (2 for
# ResNet56/110 students' pairs, 6 for the VGG and WRN pairs): those leaves set it. Single-label
# only (reads the one-hot `gt`).
method = dict(
    distill_losses=dict(
        dkd=dict(
            type='DKDLoss', alpha=1.0, beta=8.0, temperature=4.0, warmup_epochs=20, loss_weight=1.0
        )
    ),
)
