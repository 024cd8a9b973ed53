# What the intra-class contrastive teachers of every dataset share (<data>_intra_class_teacher.py
# add the two-view data and the probe size): the teacher recipe (schedules/sgd_90e_teacher.py),
# mlkd's runtime and methods/intra_class_teacher.py (CE + 0.02 · L_intra) as the model.
_base_ = [
    '../../schedules/sgd_90e_teacher.py',
    '../../default_runtime.py',
    '../../methods/intra_class_teacher.py',
]
model = dict(_base_.method)
