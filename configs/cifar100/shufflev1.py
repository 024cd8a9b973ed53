# CIFAR-100 classifier shufflev1 (CIFAR layout) with mdistiller's recipe: LinearClsHead + softmax
# cross-entropy, SGD lr 0.01, 240 epochs (teacher, or the "student alone" baseline).
_base_ = ['../_base_/models/cifar/shufflev1.py', '../_base_/recipes/cifar100.py']
model = dict(head=_base_.single_label_head)
optim_wrapper = dict(optimizer=dict(lr=0.01))  # mdistiller: 0.01 for MobileNet / ShuffleNet
