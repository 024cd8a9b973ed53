# The task-loss study on the ranking benchmark (the Two-way paper's comparison): the benchmark's
# plain student trained on complete labels (no missed annotations), each leaf naming its task loss.
# Scored as the benchmark is, and by the Two-way paper's mAP@sample (SampleMAP) beside it.
_base_ = ['../../ranking/student.py']
train_dataloader = dict(dataset=dict(missed_annotation=(0.0, 0.0)))
val_evaluator = [_base_.val_evaluator, dict(type='SampleMAP')]
test_evaluator = val_evaluator
