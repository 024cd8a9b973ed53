# MultiDigits multi-label classifier, student size (see
# configs/_base_/models/digits_resnet_student.py).
_base_ = ['../_base_/models/digits_resnet_student.py', '../_base_/recipes/multidigits.py']
