_base_ = ['../../_base_/pairs/intra_class/digit_objects.py', '../../_base_/methods/kd_softmax.py']
model = _base_.method
