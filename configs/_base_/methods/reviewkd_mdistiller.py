# ReviewKD as mdistiller runs it (mdistiller/distillers/ReviewKD.py): the teacher's targets are its
# pre-activation stage features (preact_feats[1:], `preactK` of the taps) and the pooled feature;
# the student's inputs stay its stage outputs (STU_PREACT False). The CIFAR-100 and Tiny ImageNet
# pairs use it; the multi-label pairs keep reviewkd.py's teacher stage outputs (L2D's ReviewKD reads
# its networks' stage outputs).
_base_ = ['./reviewkd.py']
__targets = ['t_preact1', 't_preact2', 't_preact3', 't_preact4', 't_pool']
method = dict(
    connectors=dict(s_abf=dict(target=__targets)),
    distill_losses=dict(reviewkd=dict(inputs=dict(t_feats=__targets))),
)
