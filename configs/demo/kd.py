# The demo's KD student: per-class sigmoid binary KL at temperature 4 (methods/kd.py, weight 10).
_base_ = ['../_base_/demo/multidigits_heldout_pair.py', '../_base_/methods/kd.py']
model = _base_.method
