# The demo pair (pairs/multidigits.py) on the benchmark's MultiDigits splits (benchmark_splits.py):
# weights are chosen on val, numbers reported on test (tools/demo.py, docs/demo.md).
# `tools/train.py configs/demo/teacher.py` writes the teacher named here; tools/demo.py passes its
# own.
_base_ = ['../pairs/multidigits.py', './benchmark_splits.py']
train_dataloader = dict(dataset=_base_.benchmark_train, **_base_.benchmark_loader)
val_dataloader = dict(dataset=_base_.benchmark_val, **_base_.benchmark_loader)
test_dataloader = dict(dataset=_base_.benchmark_test, **_base_.benchmark_loader)
data_preprocessor = _base_.benchmark_preprocessor
# How far each distilled student moved toward its teacher (DistillFidelity; the teacher is scored
# live on val and test, the cache holds training batches only).
val_evaluator = [_base_.val_evaluator, dict(type='DistillFidelity')]
test_evaluator = val_evaluator
param_scheduler = [
    dict(_base_.param_scheduler[0], eta_max=_base_.student_peak_lr),
    _base_.param_scheduler[1],
]
model = dict(
    # The demo's networks (backbones pretrained on MultiGlyphs), not pairs/multidigits.py's.
    student='{{fileDirname}}/../../demo/student.py',
    teacher='{{fileDirname}}/../../demo/teacher.py',
    teacher_ckpt='work_dirs/teacher',  # the teacher's work dir: its last checkpoint
)
# The setting the papers' weights were tuned in (batch 64, 80 COCO classes, BCE-sum task loss).
# A loss given `weight_reference=paper_reference` rescales its weight to this setting by the rule
# of ReferenceWeighted (docs/diagnosis.md): here L_PD, L_NDD, CD and ID weights / 8, MLD's
# unchanged.
paper_reference = dict(batch_size=64, num_classes=80)
