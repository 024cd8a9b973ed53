# MultiGlyphs: the demo's pretraining task (mlkd/datasets/multiglyphs.py), MultiDigits' layout with
# 12 synthetic glyph classes instead of digits; generated from a seed, no download. Each split
# draws its own glyphs (train 150 per class, val 50 per class).
_base_ = ['./multidigits.py']
dataset_type = 'MultiGlyphs'
num_classes = 12
num_train_samples = 3000
data_preprocessor = dict(num_classes=num_classes)
train_dataloader = dict(
    dataset=dict(
        _delete_=True,
        type=dataset_type,
        split='train',
        num_samples=num_train_samples,
        glyphs_per_class=150,
        image_size=_base_.image_size,
        seed=0,
        pipeline=_base_.train_pipeline,
    )
)
val_dataloader = dict(
    dataset=dict(
        train_dataloader['dataset'],
        split='val',
        num_samples=500,
        glyphs_per_class=50,
        pipeline=_base_.test_pipeline,
    )
)
test_dataloader = val_dataloader
