# PKT on the ranking benchmark (a feature method of the 3D paper's Table B.1): probabilistic
# knowledge transfer on the pooled backbone features, mdistiller's weight (methods/pkt.py).
_base_ = ['../_base_/ranking/pair.py', '../_base_/methods/pkt.py']
model = _base_.method
