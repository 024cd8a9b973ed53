"""Deployment: ONNX export of a classifier (:mod:`.onnx_export`), ONNX Runtime inference
(:mod:`.onnx_runtime`), float16 / int8 variants (:mod:`.precision`). ``onnx`` and ``onnxruntime`` are the ``deploy`` extra
(``pip install "mlkd[deploy]"``) and are imported only when used."""

from .onnx_export import (
    EXPORTERS,
    INPUT_NAME,
    OUTPUT_NAME,
    Preprocessing,
    ScoreModel,
    export_onnx_bytes,
    score_activation,
)
from .onnx_runtime import OnnxClassifier, require_onnxruntime
from .precision import PRECISIONS, convert_precision

__all__ = [
    'EXPORTERS',
    'INPUT_NAME',
    'OUTPUT_NAME',
    'OnnxClassifier',
    'PRECISIONS',
    'Preprocessing',
    'ScoreModel',
    'convert_precision',
    'export_onnx_bytes',
    'require_onnxruntime',
    'score_activation',
]
