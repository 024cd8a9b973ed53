# teacher_digits0to6.py on digits 3-9 instead: the labels of 0-2 dropped. Teacher `high` of
# configs/multi_teacher/.
_base_ = ['./teacher_digits0to6.py']
classes = _base_.digits_3_to_9
train_dataloader = dict(dataset=dict(classes=classes))
val_dataloader = dict(dataset=dict(classes=classes))
test_dataloader = dict(dataset=dict(classes=classes))
