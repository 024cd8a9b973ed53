# The demo's MDKD student: MLD (weight 10) plus label-pair dependencies (methods/mdkd.py);
# dependency weight 1, kept: chosen on val from 0.3 / 1 / 3 (docs/demo.md, "Loss weight of
# each method").
_base_ = ['../_base_/demo/multidigits_heldout_pair.py', '../_base_/methods/mdkd.py']
model = _base_.method
