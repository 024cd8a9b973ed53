# The study's KD + RKD: the RKD loss weight chosen on val (intra_class_rkd_search.md: 0.001 of the
# paper's, i.e. distance 0.025, angle 0.05); at the paper's weight (kd_rkd_paper_weight.py) RKD's
# gradient is 20-50x KD's and, under this recipe's Adam, the student does not learn the task.
_base_ = ['./kd_rkd_paper_weight.py']
model = dict(distill_losses=dict(rkd=dict(loss_weight=0.001)))
