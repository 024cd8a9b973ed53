# The demo recipe (recipes/multidigits.py) on the benchmark's MultiDigits splits
# (benchmark_splits.py): what the demo's teacher and student (configs/demo/teacher.py,
# student.py) add their network to.
_base_ = ['../recipes/multidigits.py', './benchmark_splits.py']
train_dataloader = dict(dataset=_base_.benchmark_train, **_base_.benchmark_loader)
val_dataloader = dict(dataset=_base_.benchmark_val, **_base_.benchmark_loader)
test_dataloader = dict(dataset=_base_.benchmark_test, **_base_.benchmark_loader)
data_preprocessor = _base_.benchmark_preprocessor
