# MultiDigits multi-label classifier, student size, ML-Decoder head (the nets of the distillation
# demo).
_base_ = ['../_base_/models/digits_resnet_student_mldecoder.py', '../_base_/recipes/multidigits.py']
