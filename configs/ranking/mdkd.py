# MDKD on the ranking benchmark: MLD (weight 10) plus label-pair dependencies (methods/mdkd.py).
_base_ = ['../_base_/ranking/pair.py', '../_base_/methods/mdkd.py']
model = _base_.method
