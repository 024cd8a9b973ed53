"""Smaller ONNX files: float16 weights and activations, or dynamically quantised int8 weights.

* ``'fp16'``: every float32 tensor and operator of the graph in float16, the inputs and outputs
  kept float32 (``onnxruntime.transformers.float16.convert_float_to_float16(keep_io_types=True)``);
  about half the size. On CPUs without float16 arithmetic ONNX Runtime computes it in float32
  after casts, so it saves size, not time.
* ``'int8'``: dynamic quantisation (``onnxruntime.quantization.quantize_dynamic``, signed int8
  weights): the weights of Conv / MatMul / Gemm are stored in int8 with a scale, activations are
  quantised on the fly per call; no calibration data needed.

The mlkd metadata is kept, with ``mlkd.precision`` added. What either costs in accuracy is
measured by ``tools/deployment/pytorch2onnx.py --precision`` on the config's test split
(:func:`mlkd.apis.export_onnx`).
"""

from __future__ import annotations

import logging
import os.path as osp
import tempfile

__all__ = ['PRECISIONS', 'convert_precision']

PRECISIONS = ('fp32', 'fp16', 'int8')


def _set_metadata(proto, key: str, value: str) -> None:
    for entry in proto.metadata_props:
        if entry.key == key:
            entry.value = value
            return
    entry = proto.metadata_props.add()
    entry.key, entry.value = key, value


def convert_precision(data: bytes, precision: str) -> bytes:
    """The serialised model ``data`` (float32) converted to ``precision`` (module docstring)."""
    import onnx

    if precision not in PRECISIONS:
        raise ValueError(f'precision must be one of {PRECISIONS}, got {precision!r}')
    proto = onnx.load_from_string(data)
    if precision == 'fp16':
        from onnxruntime.transformers.float16 import convert_float_to_float16

        proto = convert_float_to_float16(proto, keep_io_types=True)
    elif precision == 'int8':
        from onnxruntime.quantization import QuantType, quantize_dynamic

        with tempfile.TemporaryDirectory() as folder:
            source, target = osp.join(folder, 'fp32.onnx'), osp.join(folder, 'int8.onnx')
            onnx.save(proto, source)
            logging.disable(logging.WARNING)  # its advice to pre-process the graph, every call
            try:
                quantize_dynamic(source, target, weight_type=QuantType.QInt8)
            finally:
                logging.disable(logging.NOTSET)
            proto = onnx.load(target)
    _set_metadata(proto, 'mlkd.precision', precision)
    return proto.SerializeToString()
