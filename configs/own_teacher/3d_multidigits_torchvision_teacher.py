_base_ = [
    '../_base_/pairs/own_teacher/multidigits_torchvision_teacher.py',
    '../_base_/methods/3d.py',
]
model = _base_.method
