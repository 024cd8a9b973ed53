# Plain KD on the ranking benchmark: per-class sigmoid binary KL at temperature 4 (methods/kd.py).
_base_ = ['../_base_/ranking/pair.py', '../_base_/methods/kd.py']
model = _base_.method
