# The demo's KD student: per-class sigmoid binary KL at temperature 4 (methods/kd.py). Weight 10
# (kept), chosen on val from 3 / 10 / 30 (docs/demo.md, protocol 3, "Loss weight of each method").
_base_ = ['../_base_/demo/multidigits_heldout_pair.py', '../_base_/methods/kd.py']
model = _base_.method
