"""What the tools run, as functions: one place for the work, the scripts only parse arguments."""

from .deployment import OnnxCheckError, OnnxExport, calibrate_thresholds, export_onnx
from .inference import (
    ImageDecodeError,
    ImageLabeler,
    LoadedClassifier,
    init_classifier,
    label_images,
    list_images,
    save_labels,
    split_scores,
)

__all__ = [
    'ImageDecodeError',
    'ImageLabeler',
    'LoadedClassifier',
    'OnnxCheckError',
    'OnnxExport',
    'calibrate_thresholds',
    'export_onnx',
    'init_classifier',
    'label_images',
    'list_images',
    'save_labels',
    'split_scores',
]
