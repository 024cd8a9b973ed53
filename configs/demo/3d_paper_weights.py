# The demo's 3D student with the paper's weights applied literally (alpha = 100, beta = 10; no
# rescaling; 3d.py's alpha chosen on val is undone).
_base_ = ['./3d.py']
model = dict(
    distill_losses=dict(
        pd=dict(weight_reference=None, loss_weight=100.0), ndd=dict(weight_reference=None)
    )
)
