_base_ = ['../../_base_/pairs/intra_class/multidigits.py', '../../_base_/methods/kd_softmax.py']
model = _base_.method
