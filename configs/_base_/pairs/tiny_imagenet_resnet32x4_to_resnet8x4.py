# Single-label distillation pair resnet32x4 -> resnet8x4 on Tiny ImageNet with mdistiller's recipe
# (single_label/tiny_imagenet.py). Train the teacher first with
# configs/tiny_imagenet/resnet32x4.py.
_base_ = ['./single_label/tiny_imagenet.py']
model = dict(
    teacher='{{fileDirname}}/../../tiny_imagenet/resnet32x4.py',
    student='{{fileDirname}}/../../tiny_imagenet/resnet8x4.py',
    teacher_ckpt='work_dirs/tiny_imagenet/resnet32x4',
)
