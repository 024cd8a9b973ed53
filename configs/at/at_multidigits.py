_base_ = ['../_base_/pairs/multidigits.py', '../_base_/methods/at.py']
model = _base_.method
