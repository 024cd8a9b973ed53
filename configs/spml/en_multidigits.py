# EN: the spatial-consistency paper's expected-negative loss (Verelst et al., "Spatial Consistency
# Loss for Training Multi-Label Classifiers from Single-Label Annotations", WACV 2023, eq. (8) as
# reconstructed in docs/methods.md §3.3 / §3.5): annotated positives, and as negatives every class
# but the round(K) with the highest running-average score of the image; K = the validation
# split's positives per image. Zhou et al.'s entropy-maximisation loss is em_multidigits.py.
_base_ = ['../_base_/spml/multidigits.py']
model = dict(losses=dict(en=_base_.en_loss))
