_base_ = [
    '../_base_/pairs/voc_swin_t_to_mobilenet_v2.py',
    '../_base_/methods/reviewkd_swin_teacher.py',
]
model = _base_.method
