# MultiDigits multi-label classifier from timm (resnet18, ML-Decoder head): the teacher of
# configs/own_teacher/*_multidigits_timm_teacher.py. Start it from a timm weights file with
# `--cfg-options model.backbone.weights=resnet18.safetensors`.
_base_ = ['../_base_/models/digits_timm_resnet18_mldecoder.py', '../_base_/recipes/multidigits.py']
