# single_label/cifar100.py on Tiny ImageNet (64 x 64 probe): mdistiller's recipe, the dataset's own
# data preprocessor for both networks, the teacher's accuracy logged before training
# (distiller.py).
_base_ = ['../../datasets/tiny_imagenet.py', '../../schedules/sgd_cifar_240e.py', './distiller.py']
model = dict(data_preprocessor=_base_.data_preprocessor, probe_input_size=(64, 64))
optim_wrapper = dict(constructor='FrozenAwareOptimWrapperConstructor')  # teacher left out
