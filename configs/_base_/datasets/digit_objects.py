# DigitObjects: DigitScenes (digit_scenes.py) with one object per image and all 10 colours of its
# palette, a single-label dataset of 100 (colour, digit) classes, as CIFAR-100 has 100: classes
# that resemble each other (a digit in near colours, near digits in one colour) and variation
# within each class (the handwriting of the scan, size, position, faint objects whose colour is
# uncertain), the structure a teacher's soft labels can carry. Balanced classes (Zipf exponent 0;
# the scene topics are unused), complete labels, easy objects of 14-22 px (hard ones as in
# DigitScenes: 6-8 px or faint) placed freely. Top-1 / top-5
# accuracy; 20,000 training images, 2,000 val, 5,000 test (disjoint scan pools). The training
# size is the intra-class study's candidate 3 (configs/intra_class/README.md, "Study on
# DigitObjects": fallback 2 of step 1; candidates 1-2 trained on 10,000).
_base_ = ['./digit_scenes.py']
num_classes = 100
num_train_samples = 20000
objects = dict(
    num_colours=10,
    max_objects=1,
    mean_objects=1.0,
    zipf_exponent=0.0,
    topic_weight=0.0,
    num_topics=10,
    topic_size=10,
    object_size=(14, 22),
    grid=None,
)
# The generator settings every split uses, as the base names them (`scene`).
scene = dict(_base_.scene, **objects)
data_preprocessor = dict(type='ClsDataPreprocessor', num_classes=num_classes, to_onehot=False)
train_dataloader = dict(
    dataset=dict(num_samples=num_train_samples, missed_annotation=(0.0, 0.0), **objects)
)
val_dataloader = dict(dataset=dict(num_samples=2000, **objects))
test_dataloader = dict(dataset=dict(num_samples=5000, **objects))
val_evaluator = dict(_delete_=True, type='Accuracy', topk=(1, 5))
test_evaluator = val_evaluator
