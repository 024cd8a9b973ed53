# Softmax KD (kd_softmax.py: KL at T = 4 with weight 0.9, CE 0.1) plus RKD (rkd.py: distance 25,
# angle 50 on the pooled features): the "Ours+RKD" student of the intra-class contrastive paper,
# which gives no weights for the combination, so each loss keeps its own.
_base_ = ['./rkd.py']
method = dict(
    task_loss_weight=0.1,
    distill_losses=dict(kd=dict(type='SoftmaxKDLoss', temperature=4.0, loss_weight=0.9)),
)
