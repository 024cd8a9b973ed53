# EN + SCL: class maps consistent with per-image running-average heatmaps kept in the full-image
# frame (Verelst et al. 2023). Momentum, distance and weight are mlkd's reconstruction
# (docs/methods.md §3.3), not the paper's values.
_base_ = ['./en_multidigits.py']
model = dict(
    losses=dict(scl=dict(type='SpatialConsistencyLoss', num_samples=_base_.num_train_samples))
)
