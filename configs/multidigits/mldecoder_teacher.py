# MultiDigits multi-label classifier, teacher size, ML-Decoder head (the nets of the distillation
# demo).
_base_ = ['../_base_/models/digits_resnet_teacher_mldecoder.py', '../_base_/recipes/multidigits.py']
