# KD + RKD at the paper's RKD weight (mdistiller's CIFAR distance 25, angle 50, loss weight 1): the
# start of the study's RKD weight search on val (kd_rkd.py holds the weight it chooses).
_base_ = [
    '../../_base_/pairs/intra_class/digit_objects.py',
    '../../_base_/methods/kd_softmax_rkd.py',
]
model = _base_.method
