# MS-COCO 2014 with Cole et al.'s splits, as Verelst et al. (WACV 2023) Table K.1: train2014 held
# out into train (65,665 images, one observed positive each, from Cole et al.'s published observed
# labels) and val (16,416, full labels) by their seed-1200 split of formatted_train_images.npy;
# val2014 (40,137) is the test set. Needs their formatted_train_{images,labels_obs}.npy in
# data/coco.
_base_ = ['./coco2014_spml.py']
cole_images = 'formatted_train_images.npy'
train_dataloader = dict(
    dataset=dict(
        holdout=dict(part='train', images_file=cole_images),
        observed_labels=dict(
            _delete_=True,
            mode='file',
            file='formatted_train_labels_obs.npy',
            images_file=cole_images,
        ),
    )
)
val_dataloader = dict(
    dataset=dict(split='train', holdout=dict(part='val', images_file=cole_images), test_mode=True)
)
# test_dataloader stays the base's val2014 loader.
