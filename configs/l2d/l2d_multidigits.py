# L2D (Yang et al., ICCV 2023) on MultiDigits: BCE-sum task loss + 10 * MLD + LED (100 * CD +
# 1000 * ID on the ML-Decoder's label-wise embeddings), the shipped configuration's weights.
_base_ = ['../_base_/distill_multidigits.py']
model = dict(
    student_taps=dict(label_emb='head.decoder'),
    teacher_taps=dict(label_emb='head.decoder'),
    distill_losses=dict(
        mld=dict(type='MultiLabelLogitDistillLoss', loss_weight=10.0),
        led=dict(type='LabelEmbeddingDistillLoss', cd_weight=100.0, id_weight=1000.0),
    ))
