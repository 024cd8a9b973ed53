# The demo's student on held-out MultiDigits splits, backbone pretrained on MultiGlyphs
# (tools/demo.py; docs/demo.md): the teacher's recipe and data with the student's network.
_base_ = ['../_base_/models/digits_resnet_student_mldecoder_pretrained.py',
          '../_base_/recipes/multidigits.py', '../_base_/datasets/multidigits_heldout_splits.py']
train_dataloader = dict(dataset=_base_.heldout_train)
val_dataloader = dict(dataset=_base_.heldout_val)
test_dataloader = dict(dataset=_base_.heldout_test)
