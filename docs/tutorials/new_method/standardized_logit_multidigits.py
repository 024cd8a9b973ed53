# Tutorial config: the user's StandardizedLogitLoss on MultiDigits, loaded from a file outside
# the package with custom_imports. Run from the repository root:
#   PYTHONPATH=docs/tutorials/new_method python tools/train.py \
#       docs/tutorials/new_method/standardized_logit_multidigits.py
_base_ = ['../../../configs/_base_/pairs/multidigits.py']
custom_imports = dict(imports=['standardized_logit_loss'], allow_failed_imports=False)
model = dict(
    distill_losses=dict(
        std_logit=dict(type='StandardizedLogitLoss', loss_weight=10.0),
    )
)
