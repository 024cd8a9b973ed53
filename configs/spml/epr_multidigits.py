# EPR: BCE on the positive only + (mean predicted positives - k)^2 / C^2 (Cole et al. 2021).
_base_ = ['../_base_/spml/multidigits.py']
model = dict(
    losses=dict(
        epr=dict(type='ExpectedPositivesLoss', expected_positives=_base_.expected_positives)
    )
)
