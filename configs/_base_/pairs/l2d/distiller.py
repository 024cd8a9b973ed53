# The distiller of every L2D-protocol pair (pairs/coco_*.py, pairs/voc_*.py), listed in a pair's
# `_base_`. Each pair fills in its teacher and student configs and the teacher's work dir (its last
# checkpoint there); the networks' configs declare their stage taps (`stage1..K`) for the feature
# methods, recorded only when a loss reads them, and a method adds its own (L2D's `label_emb`).
model = dict(
    type='SingleTeacherDistiller',
    # NaN / inf or exploding losses stop the run before the step, naming the terms.
    loss_guard=dict(divergence_factor=1e4, reference_iters=10),
    teacher=None,
    student=None,
    teacher_ckpt=None,
    student_taps=dict(),
    teacher_taps=dict(),
    probe_input_size=(224, 224),
    teacher_cache=dict(dir=None, mode=None, dtype='float32'),
)  # docs/teacher_cache.md
