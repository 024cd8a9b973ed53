_base_ = ['../../_base_/recipes/intra_class/cifar10_intra_class_teacher.py']
model = dict(classifier='{{fileDirname}}/wrn_40_2.py')
