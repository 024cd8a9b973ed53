# MSE on the ranking benchmark: squared error between student and teacher probabilities.
_base_ = ['../_base_/ranking/pair.py', '../_base_/methods/mse.py']
model = _base_.method
