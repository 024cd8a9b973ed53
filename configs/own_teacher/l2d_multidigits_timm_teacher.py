_base_ = ['../_base_/pairs/own_teacher/multidigits_timm_teacher.py', '../_base_/methods/l2d.py']
model = _base_.method
