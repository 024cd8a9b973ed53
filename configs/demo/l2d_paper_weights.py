# The demo's L2D student with the paper's weights applied literally (10 * MLD + 100 * CD + 1000 *
# ID; no rescaling).
_base_ = ['./l2d.py']
model = dict(
    distill_losses=dict(
        mld=dict(weight_reference=None), led=dict(weight_reference=None, loss_weight=1.0)
    )
)
