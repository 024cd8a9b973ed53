# Softmax KD (kd_softmax.py: KL at T = 4 with weight 0.9, CE 0.1) plus RKD (rkd.py: distance 25,
# angle 50 on the pooled features): the "Ours+RKD" student of the intra-class contrastive paper,
# which gives no weights for the combination, so each loss keeps its own. These are SGD weights:
# under an Adam recipe RKD's gradient can drown the classification terms (the MultiDigits study
# uses 0.001 of RKD's, chosen on val: configs/intra_class/README.md, "KD+RKD").
_base_ = ['./rkd.py']
method = dict(
    task_loss_weight=0.1,
    distill_losses=dict(kd=dict(type='SoftmaxKDLoss', temperature=4.0, loss_weight=0.9)),
)
