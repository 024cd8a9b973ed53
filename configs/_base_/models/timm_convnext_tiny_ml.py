# Multi-label ConvNeXt-T from timm (any timm model name works the same) with a linear multi-label
# head, started from timm's ImageNet-12k -> 1k weights on the Hugging Face Hub (downloaded once,
# online; offline, save them as a file and set `weights` to its path).
_base_ = ['./common/multi_label_classifier.py', '../taps/timm.py']
model = dict(
    backbone=dict(
        type='TimmBackbone',
        model_name='convnext_tiny',
        weights='hf-hub:timm/convnext_tiny.in12k_ft_in1k',
    ),
    head=dict(in_channels=768),
)
taps = _base_.timm_taps  # what a distiller may record of this network
