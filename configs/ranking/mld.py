# MLD on the ranking benchmark: L2D's one-vs-all binary KL on logits (methods/mld.py).
_base_ = ['../_base_/ranking/pair.py', '../_base_/methods/mld.py']
model = _base_.method
