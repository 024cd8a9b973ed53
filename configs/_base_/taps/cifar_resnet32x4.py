# Taps of the CIFAR-layout resnet32x4: resnet32 with four times the channels, so the same modules
# as cifar_resnet32.py (checked with named_modules; docs/model_zoo.md).
_base_ = ['./cifar_resnet32.py']
cifar_resnet32x4_taps = _base_.cifar_resnet32_taps
