# EM: BCE on the positive, entropy maximisation on the unobserved labels (Zhou et al.,
# "Acknowledging the Unknown for Multi-label Learning with Single Positive Labels", ECCV 2022;
# docs/methods.md §3.4). Until mlkd 0.1 this loss was registered and reported as "EN".
_base_ = ['../_base_/spml/multidigits.py']
model = dict(losses=dict(em=dict(type='EntropyMaximisationLoss', alpha=0.1)))
