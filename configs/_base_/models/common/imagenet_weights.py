# The ImageNet-layout model files (`../<net>_ml.py`) list this file before
# multi_label_classifier.py and set `PRETRAINED` to their backbone's mmpretrain ImageNet-1K
# checkpoint, which the backbone's init_cfg loads (downloaded by mmengine on first use; set
# `init_cfg=None` to train from scratch).
PRETRAINED = None
