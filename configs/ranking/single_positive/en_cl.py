# Single positive, EN with the consistency loss (CL) over epochs (the SCL paper's EN+CL row).
_base_ = ['./en.py']
model = dict(losses=dict(cl=dict(type='ConsistencyLoss', num_samples=_base_.num_train_samples)))
