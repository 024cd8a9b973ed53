# ofd.py for a CIFAR VGG teacher: the margins from the BNs before the ReLUs of the tapped stages
# (the VGG's bn_before_relu_paths() also lists block0's, which no tap reads).
_base_ = ['./ofd.py']
method = dict(
    distill_losses=dict(
        ofd=dict(
            margin_bns=[
                'backbone.block1.4',
                'backbone.block2.4',
                'backbone.block3.4',
                'backbone.block4.4',
            ]
        )
    )
)
