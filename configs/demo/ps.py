# The demo's PS student: L2D's partial softmax (methods/ps.py, weight 10, applied literally:
# PartialSoftmaxLoss takes no weight_reference).
_base_ = ['../_base_/demo/multidigits_heldout_pair.py', '../_base_/methods/ps.py']
model = _base_.method
