# MultiDigits multi-label classifier, teacher size (see
# configs/_base_/models/digits_resnet_teacher.py).
_base_ = ['../_base_/models/digits_resnet_teacher.py', '../_base_/recipes/multidigits.py']
