# Single positive, EN with the spatial consistency loss (SCL; Verelst et al., WACV 2023).
_base_ = ['./en.py']
model = dict(
    losses=dict(scl=dict(type='SpatialConsistencyLoss', num_samples=_base_.num_train_samples))
)
