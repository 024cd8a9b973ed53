_base_ = ['../_base_/pairs/multidigits.py', '../_base_/methods/vid.py']
model = _base_.method
