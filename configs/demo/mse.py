# The demo's MSE student: squared error between student and teacher probabilities (methods/mse.py).
# Weight 10 (kept), chosen on val from 3 / 10 / 30 (docs/demo.md, protocol 3, "Loss weight of
# each method").
_base_ = ['../_base_/demo/multidigits_heldout_pair.py', '../_base_/methods/mse.py']
model = _base_.method
