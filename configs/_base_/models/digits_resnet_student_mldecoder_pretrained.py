# The demo student (digits_resnet_student_mldecoder.py) with its backbone started from the bundled
# MultiGlyphs pretraining (configs/pretrain/, mlkd/weights/; sha256-checked when loaded), as the
# papers' students start from ImageNet. The ML-Decoder head starts from scratch.
_base_ = ['./digits_resnet_student_mldecoder.py']
model = dict(
    backbone=dict(
        zero_init_residual=False,  # would zero the loaded residual BNs after loading
        init_cfg=dict(type='BundledPretrained', name='multiglyphs_student_backbone'),
    )
)
