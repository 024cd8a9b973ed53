# swin_t on PASCAL VOC 2007 with an ML-Decoder head (L2D protocol), teacher recipe: 30 epochs of a
# one-cycle schedule sized for 80.
_base_ = ['../_base_/models/swin_t_ml.py', '../_base_/recipes/voc2007_l2d_teacher.py']
model = dict(
    neck=None,
    head=dict(
        _delete_=True,
        type='MLDecoderHead',
        num_classes=20,
        in_channels=768,
        loss=dict(type='BinaryCrossEntropySumLoss'),
    ),
)
work_dir = 'work_dirs/teachers/voc_swin_t_mldecoder'
