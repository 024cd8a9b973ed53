# The MultiDigits pair (../multidigits.py) with a teacher from timm (resnet18): train it first with
# `tools/train.py configs/multidigits/timm_resnet18_mldecoder_teacher.py`.
_base_ = ['../multidigits.py']
model = dict(
    teacher='{{fileDirname}}/../../../multidigits/timm_resnet18_mldecoder_teacher.py',
    teacher_ckpt='work_dirs/timm_resnet18_mldecoder_teacher',
)
