# Verelst et al. (WACV 2023) Table B.1 wiring (no data): ResNet-50 from mmpretrain's ImageNet-1K
# weights with a linear 80-class head, trained under ClassifierWithLosses. The head's own loss is
# off (task_loss_weight=0): each leaf names its objective in `model.losses`, so every row of the
# table runs through the same model, data and optimiser. The setting bases (coco_resnet50_{full,
# partial75,partial40,single}.py) add MS-COCO 2014 with the observed labels of a column and the
# augmentation of Verelst et al. at 448 (configs/_base_/datasets/spml_pipeline.py).
_base_ = [
    '../models/resnet50_ml.py',
    '../schedules/adam_10e.py',
    '../default_runtime.py',
]
# Size of the per-sample state (ROLE, CL, SCL): the train2014 images with a label (82,081).
num_train_samples = 82081
# k, the mean number of positives per image (Verelst et al. (WACV 2023) Table K.1, COCO): ROLE's
# regulariser.
expected_positives = 2.9
# The losses with per-sample state, sized for this data: a leaf names them in `model.losses`.
role_loss = dict(
    type='ROLELoss', num_samples=num_train_samples, expected_positives=expected_positives
)
en_loss = dict(role_loss, type='ExpectedNegativeLoss')  # EN takes ROLE's two arguments
cl_loss = dict(type='ConsistencyLoss', num_samples=num_train_samples)
scl_loss = dict(type='SpatialConsistencyLoss', num_samples=num_train_samples)
model = dict(
    _delete_=True,
    type='ClassifierWithLosses',
    # NaN / inf or exploding losses stop the run before the step, naming the terms.
    loss_guard=dict(divergence_factor=1e4, reference_iters=10),
    classifier=_base_.model,
    task_loss_weight=0.0,
    probe_input_size=(448, 448),
)
