# RKD on the ranking benchmark (a feature method of the 3D paper's Table B.1): distance and angle
# relations of the pooled backbone features, mdistiller's weights (methods/rkd.py).
_base_ = ['../_base_/ranking/pair.py', '../_base_/methods/rkd.py']
model = _base_.method
