# Common part of the single-label distillation pairs on CIFAR-100: mdistiller's recipe (240 epochs,
# SGD, batch 64), the dataset's own data preprocessor for both networks, the teacher's accuracy
# logged before training (distiller.py). A pair base adds the networks and the teacher's work
# dir; the networks' configs declare their taps.
_base_ = ['../../datasets/cifar100.py', '../../schedules/sgd_cifar_240e.py', './distiller.py']
model = dict(data_preprocessor=_base_.data_preprocessor, probe_input_size=(32, 32))
# Leave the frozen teacher out of the optimizer (no per-parameter warnings, smaller state).
optim_wrapper = dict(constructor='FrozenAwareOptimWrapperConstructor')
