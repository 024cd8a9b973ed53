# MultiDigits multi-label classifier from timm (mobilenetv2_050, ML-Decoder head): the student of
# configs/own_teacher/*_multidigits_timm_student.py trained alone (its baseline).
_base_ = [
    '../_base_/models/digits_timm_mobilenetv2_student_mldecoder.py',
    '../_base_/recipes/multidigits.py',
]
