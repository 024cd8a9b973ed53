# The study's KD + RKD: the RKD loss weight of the MultiDigits study (0.001 of the paper's, chosen
# on val there: ../multidigits/kd_rkd.py) until this study's own search on val replaces it.
_base_ = ['./kd_rkd_paper_weight.py']
model = dict(distill_losses=dict(rkd=dict(loss_weight=0.001)))
