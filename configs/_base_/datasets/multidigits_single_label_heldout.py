# Single-label MultiDigits (one digit per image, 10 classes) on the held-out protocol of
# multidigits_heldout_splits.py (disjoint scan pools; settings chosen on val, numbers reported on
# test) with 1000 training mosaics instead of 1500, batch 32: the bundled-data study of configs/intra_class,
# small enough to train many runs on a CPU and hard enough for a width-4 student to stay below
# its teacher. Val 500, test 1000 mosaics; random crop 32 with 2 px padding for training.
_base_ = ['./multidigits_single_label.py', './multidigits_heldout_splits.py']
train_dataloader = dict(batch_size=32, dataset=dict(_base_.heldout_train, num_samples=1000))
val_dataloader = dict(dataset=_base_.heldout_val)
test_dataloader = dict(dataset=_base_.heldout_test)
