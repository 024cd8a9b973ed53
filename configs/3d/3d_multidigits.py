# 3D (positive divide + negative discrepancy, 000_c32bcc1017732f06.txt) on MultiDigits with the
# paper's hyper-parameters: alpha = 100 on L_PD, beta = 10 on L_NDD, tau = 4, gamma_b = 2; bound
# form of L_NDD. Reconstructed choices and their switches: docs/methods.md section 4.4.
_base_ = ['../_base_/distill_multidigits.py']
model = dict(distill_losses=dict(
    pd=dict(type='PositiveDivideLoss', tau=4.0, loss_weight=100.0),
    ndd=dict(type='NegativeDiscrepancyLoss', form='bound', gamma_b=2.0, loss_weight=10.0),
))
