# Common part of the intra-class contrastive paper's distillation pairs on Tiny ImageNet: the student
# recipe (recipes/intra_class/tiny_imagenet_student.py), the dataset's data preprocessor for both networks,
# the teacher's accuracy logged before training, the frozen teacher left out of the optimizer. A
# pair base adds the networks and the plain and intra-class teachers' work dirs (the networks'
# configs declare their taps).
_base_ = ['../../recipes/intra_class/tiny_imagenet_student.py', './distiller.py']
model = dict(data_preprocessor=_base_.data_preprocessor, probe_input_size=(64, 64))
custom_hooks = _base_.custom_hooks + [dict(type='TeacherEvalHook'), dict(type='TeacherCacheHook')]
optim_wrapper = dict(constructor='FrozenAwareOptimWrapperConstructor')
