# Taps of any TimmBackbone with four `out_indices` (its default: the last four feature stages of
# the timm model): the stage maps [B, C, H, W], a ViT's too (patch tokens on their grid). The
# timm model's own modules stay addressable as `backbone.model.<timm name>`. A distiller records
# only the taps some loss or connector reads.
timm_taps = dict(
    stage1='backbone.feature_maps.0',
    stage2='backbone.feature_maps.1',
    stage3='backbone.feature_maps.2',
    stage4='backbone.feature_maps.3',
)
