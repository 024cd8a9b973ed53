# CIFAR-100 classifier vgg13 (CIFAR layout) with mdistiller's recipe: LinearClsHead + softmax
# cross-entropy, SGD lr 0.05, 240 epochs (teacher, or the "student alone" baseline).
_base_ = ['../_base_/models/cifar/vgg13.py', '../_base_/recipes/cifar100.py']
model = dict(head=_base_.single_label_head)
