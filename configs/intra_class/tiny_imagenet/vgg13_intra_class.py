_base_ = ['../../_base_/recipes/intra_class/tiny_imagenet_intra_class_teacher.py']
model = dict(classifier='{{fileDirname}}/vgg13.py')
