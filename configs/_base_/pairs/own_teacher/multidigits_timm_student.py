# The MultiDigits pair (../multidigits.py) with a student from timm (mobilenetv2_050) and the
# demo's teacher.
_base_ = ['../multidigits.py']
model = dict(
    student='{{fileDirname}}/../../../multidigits/timm_mobilenetv2_mldecoder_student.py',
)
