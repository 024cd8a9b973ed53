# The demo's teacher (configs/demo/teacher.py: CIFAR-layout ResNet-18 started from the MultiGlyphs
# pretraining, ML-Decoder head, the demo's data) trained on digits 0-6 only: the same images with
# the labels of 7-9 dropped (LabelSubset). Teacher `low` of configs/multi_teacher/.
_base_ = ['../demo/teacher.py', '../_base_/datasets/multidigits_digit_subsets.py']
classes = _base_.digits_0_to_6
model = dict(head=dict(num_classes=7))
data_preprocessor = dict(num_classes=7)
train_dataloader = dict(
    dataset=dict(
        _delete_=True, type='LabelSubset', classes=classes, dataset=_base_.train_dataloader.dataset
    )
)
val_dataloader = dict(
    dataset=dict(
        _delete_=True, type='LabelSubset', classes=classes, dataset=_base_.val_dataloader.dataset
    )
)
test_dataloader = dict(
    dataset=dict(
        _delete_=True, type='LabelSubset', classes=classes, dataset=_base_.test_dataloader.dataset
    )
)
