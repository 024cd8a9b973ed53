# Single positive, expected positive regularisation (EPR; Cole et al.).
_base_ = ['../../_base_/ranking/single_positive.py']
model = dict(
    losses=dict(
        epr=dict(type='ExpectedPositivesLoss', expected_positives=_base_.expected_positives)
    )
)
