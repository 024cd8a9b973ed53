# KD + RKD at the paper's RKD weight (mdistiller's CIFAR distance 25, angle 50, loss weight 1):
# kept to reproduce the collapse it causes here (configs/intra_class/README.md, "KD+RKD on
# MultiDigits"); the study's KD+RKD (kd_rkd.py) uses the weight chosen on val.
_base_ = ['../../_base_/pairs/intra_class/multidigits.py', '../../_base_/methods/kd_softmax_rkd.py']
model = _base_.method
