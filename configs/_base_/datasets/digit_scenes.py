# DigitScenes: the ranking benchmark's data (mlkd/datasets/digit_scenes.py), scenes of coloured
# handwritten digits with 40 (colour, digit) labels, COCO-like label statistics and hard (small,
# faint, occluded) objects; generated in memory, no download. Train / val / test draw from
# disjoint pools of digit scans and share the class structure (world_seed). The preprocessor,
# pipelines and evaluator are MultiDigits'.
_base_ = ['./multidigits.py']
dataset_type = 'DigitScenes'
num_classes = 40
num_train_samples = 8000  # the students' training-set size (rows of CRD's memory banks)
# Generator settings shared by every split (a leaf changes them in each loader): digits of 10-14 px
# on a 3 x 3 grid, at most 5 and 3.5 on average per image, class frequencies Zipf(0.7).
scene = dict(
    image_size=_base_.image_size,
    world_seed=0,
    grid=3,
    object_size=(10, 14),
    max_objects=5,
    mean_objects=3.5,
    zipf_exponent=0.7,
)
# The students' training labels miss half of the hard objects (none of the easy ones): what a
# teacher trained on clean labels (ranking/teacher.py) can say and the labels do not.
missed_annotation = (0.0, 0.5)
data_preprocessor = dict(num_classes=num_classes)
# The images are in memory: on 2 cores loader workers cost more than they save.
loader = dict(num_workers=0, persistent_workers=False)
train_dataloader = dict(
    **loader,
    dataset=dict(
        _delete_=True,
        type=dataset_type,
        split='train',
        num_samples=num_train_samples,
        seed=0,
        missed_annotation=missed_annotation,
        pipeline=_base_.train_pipeline,
        **scene,
    ),
)
eval_dataset = dict(type=dataset_type, num_samples=1500, seed=0, pipeline=_base_.test_pipeline)
val_dataloader = dict(**loader, dataset=dict(_delete_=True, split='val', **eval_dataset, **scene))
test_dataloader = dict(**loader, dataset=dict(_delete_=True, split='test', **eval_dataset, **scene))
