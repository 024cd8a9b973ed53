# 3D: positive divide (L_PD, weight alpha = 100, temperature = 4) + negative discrepancy (L_NDD,
# weight beta = 10, bound form with gamma_b = 2), the supplement's values for every experiment
# (Li & Cheng, "Positive Divide and Negative Discrepancy: A New Perspective on Multi-Label Logit
# Distillation", supplementary material). L_PD and the total are reconstructions: docs/methods.md
# section 4.4. A leaf config composes it with a pair: `model = _base_.method`.
method = dict(
    distill_losses=dict(
        pd=dict(type='PositiveDivideLoss', temperature=4.0, loss_weight=100.0),
        ndd=dict(type='NegativeDiscrepancyLoss', form='bound', gamma_b=2.0, loss_weight=10.0),
    ),
)
