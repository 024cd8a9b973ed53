# The demo's teacher on held-out MultiDigits splits, backbone pretrained on MultiGlyphs
# (tools/demo.py; docs/demo.md).
_base_ = ['../_base_/models/digits_resnet_teacher_mldecoder_pretrained.py',
          '../_base_/recipes/multidigits.py', '../_base_/datasets/multidigits_heldout_splits.py']
train_dataloader = dict(dataset=_base_.heldout_train)
val_dataloader = dict(dataset=_base_.heldout_val)
test_dataloader = dict(dataset=_base_.heldout_test)
