# Tutorial config: the demo student trained with the user's PolyBCELoss as its head's task loss.
#   PYTHONPATH=docs/tutorials/new_method python tools/train.py \
#       docs/tutorials/new_method/poly_bce_multidigits.py
_base_ = ['../../../configs/multidigits/resnet_student.py']
custom_imports = dict(imports=['poly_bce_loss'], allow_failed_imports=False)
model = dict(head=dict(loss=dict(type='PolyBCELoss', epsilon=1.0)))
