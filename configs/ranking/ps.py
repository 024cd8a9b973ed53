# PS on the ranking benchmark: L2D's partial softmax (methods/ps.py; the weight is literal).
_base_ = ['../_base_/ranking/pair.py', '../_base_/methods/ps.py']
model = _base_.method
