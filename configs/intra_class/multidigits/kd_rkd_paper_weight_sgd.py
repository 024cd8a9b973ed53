# A check of the cause of the KD+RKD collapse (configs/intra_class/README.md, "KD+RKD on
# MultiDigits"): KD + RKD at the paper's RKD weight, trained with mdistiller's optimiser (SGD,
# momentum 0.9, weight decay 5e-4 on every parameter, lr 0.05) and a cosine decay over the same
# 10 epochs, instead of the study's one-cycle Adam.
_base_ = ['./kd_rkd_paper_weight.py']
optim_wrapper = dict(
    optimizer=dict(_delete_=True, type='SGD', lr=0.05, momentum=0.9, weight_decay=5e-4),
    paramwise_cfg=dict(_delete_=True),
)
param_scheduler = [
    dict(type='CosineAnnealingLR', T_max=10, by_epoch=True, convert_to_iter_based=True, end=10)
]
