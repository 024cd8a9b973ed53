# MLD baseline: L2D's one-vs-all binary KL on logits alone, with L2D's logit weight 10.
distill_losses = dict(mld=dict(type='MultiLabelLogitDistillLoss', loss_weight=10.0))
student_taps = dict()
teacher_taps = dict()
