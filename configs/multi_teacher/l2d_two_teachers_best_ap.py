# l2d_two_teachers.py with each digit distilled by one teacher only: the one with the best AP on
# it on the validation set, measured before training (TeacherEvalHook; docs/multi_teacher.md).
_base_ = ['./l2d_two_teachers.py']
model = dict(label_targets='best_val_ap')
