# Study teacher: the demo's CIFAR ResNet-18 of width 16 (0.70 M parameters), softmax head.
_base_ = ['../../_base_/models/digits_resnet_student.py',
          '../../_base_/recipes/intra_class/multidigits.py']
model = dict(head=_base_.single_label_head)
