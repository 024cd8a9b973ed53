# The demo's PS student: L2D's partial softmax (methods/ps.py; PartialSoftmaxLoss takes no
# weight_reference, the weight is literal). Weight 10 (kept), chosen on val from
# 3 / 10 / 30 (docs/demo.md, protocol 3, "Loss weight of each method").
_base_ = ['../_base_/demo/multidigits_heldout_pair.py', '../_base_/methods/ps.py']
model = _base_.method
