# The study's KD + RKD: the RKD loss weight chosen on val by the study's search (step 2 of the
# README's "Study on DigitObjects", intra_class_rkd_search.md): 0.1 of the paper's (distance 2.5,
# angle 5). The step-1 val table's KD+RKD arms ran before it, at the MultiDigits study's 0.001.
_base_ = ['./kd_rkd_paper_weight.py']
model = dict(distill_losses=dict(rkd=dict(loss_weight=0.1)))
