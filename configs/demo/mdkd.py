# The demo's MDKD student: MLD plus label-pair dependencies (methods/mdkd.py, mlkd's weights).
_base_ = ['../_base_/demo/multidigits_heldout_pair.py', '../_base_/methods/mdkd.py']
model = _base_.method
