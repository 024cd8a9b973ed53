# Intra-class contrastive teachers of the intra-class contrastive paper on CIFAR-100: two views per
# training image (datasets/cifar100_anchor_positive.py) and, through intra_class_teacher.py,
# the teacher recipe (schedules/sgd_90e_teacher.py) and
# methods/intra_class_teacher.py (CE + 0.02 · L_intra). A leaf names the classifier.
_base_ = ['../../datasets/cifar100_anchor_positive.py', './intra_class_teacher.py']
model = dict(probe_input_size=(32, 32))
