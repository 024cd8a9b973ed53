# The demo's MSE student: squared error between student and teacher probabilities (methods/mse.py).
_base_ = ['../_base_/demo/multidigits_heldout_pair.py', '../_base_/methods/mse.py']
model = _base_.method
