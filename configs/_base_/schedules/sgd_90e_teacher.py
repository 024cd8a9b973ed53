# Teacher recipe of "Enriching Knowledge Distillation with Intra-Class Contrastive Learning"
# (anonymous ICLR submission, §5.1), for the plain and the intra-class contrastive teachers: the
# student recipe sgd_90e.py (SGD, momentum 0.9, weight decay 5e-4, 90 epochs, x0.1 at 30 and 60)
# with base lr 0.5 for a global batch of 256 (the *_anchor_positive.py dataset bases hold 256
# images per GPU). On N GPUs: per-GPU batch 256 / N, or `--auto-scale-lr` (lr x N x batch / 256).
_base_ = ['./sgd_90e.py']
optim_wrapper = dict(optimizer=dict(lr=0.5))
auto_scale_lr = dict(base_batch_size=256)
