"""Run an mlkd ONNX file with ONNX Runtime: the scores of a batch, and what its metadata says."""

from __future__ import annotations

import json
import os.path as osp

import numpy as np

from .onnx_export import FORMAT_VERSION, INPUT_NAME, OUTPUT_NAME, Preprocessing

__all__ = ['OnnxClassifier', 'require_onnxruntime']


def require_onnxruntime():
    """``import onnxruntime``, or an error that says how to install it."""
    try:
        import onnxruntime
    except ImportError:
        raise ModuleNotFoundError(
            'ONNX Runtime is not installed: pip install "mlkd[deploy]" '
            '(or pip install onnx onnxruntime -c requirements/constraints.txt)'
        ) from None
    return onnxruntime


class OnnxClassifier:
    """An ONNX Runtime session on a file written by ``tools/deployment/pytorch2onnx.py``.

    Args:
        model: the file's path, or its bytes.
        threads: intra-op threads of the session; ``None``: torch's current number
            (``torch.get_num_threads()``, which follows ``OMP_NUM_THREADS``), so that PyTorch and
            ONNX Runtime run on the same cores.
        name: how errors name the model (default: the path).

    Attributes:
        classes: class names (``[C]``).
        activation: ``'sigmoid'`` or ``'softmax'``.
        input_shape: ``(3, H, W)`` the graph takes.
        preprocessing: :class:`Preprocessing` applied by :meth:`scores` when the graph takes
            normalised inputs, ``None`` when the graph does it (folded).
        test_pipeline: the test pipeline of the config it was exported from (list of dicts).
        metadata: every ``metadata_props`` entry, as strings.

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file is not an ONNX model, or not one mlkd wrote (no ``mlkd.format``).
    """

    #: Metadata entries stored as JSON (the others are plain strings).
    STRUCTURED_KEYS = (
        'mlkd.classes',
        'mlkd.input_shape',
        'mlkd.test_pipeline',
        'mlkd.mean',
        'mlkd.std',
        'mlkd.to_rgb',
    )

    def __init__(self, model: str | bytes, threads: int | None = None, name: str | None = None):
        ort = require_onnxruntime()
        if isinstance(model, str) and not osp.isfile(model):
            raise FileNotFoundError(f'ONNX model not found: {model!r}')
        self.name = name or (model if isinstance(model, str) else 'the ONNX model')
        options = ort.SessionOptions()
        if threads is None:
            import torch

            threads = torch.get_num_threads()
        options.intra_op_num_threads = int(threads)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        try:
            self.session = ort.InferenceSession(
                model, sess_options=options, providers=['CPUExecutionProvider']
            )
        except Exception as error:  # ORT raises its own exception types (InvalidProtobuf, ...)
            raise ValueError(
                f'{self.name!r} is not an ONNX model ONNX Runtime can load: {error}'
            ) from None
        self.metadata = dict(self.session.get_modelmeta().custom_metadata_map)
        if 'mlkd.format' not in self.metadata:
            raise ValueError(
                f'{self.name!r} was not written by mlkd (no mlkd.* metadata); export it with '
                'tools/deployment/pytorch2onnx.py'
            )
        if self.metadata['mlkd.format'] != FORMAT_VERSION:
            raise ValueError(
                f'{self.name!r} has mlkd.format {self.metadata["mlkd.format"]!r}; this mlkd '
                f'reads format {FORMAT_VERSION!r}'
            )
        try:
            meta = {k: json.loads(self.metadata[k]) for k in self.STRUCTURED_KEYS}
        except (KeyError, json.JSONDecodeError) as error:
            raise ValueError(f'{self.name!r}: unreadable mlkd metadata ({error!r})') from None
        self.classes = [str(c) for c in meta['mlkd.classes']]
        self.activation = self.metadata.get('mlkd.activation', 'sigmoid')
        self.input_shape = tuple(int(v) for v in meta['mlkd.input_shape'])
        self.test_pipeline = meta['mlkd.test_pipeline']
        self.config_sha256 = self.metadata.get('mlkd.config_sha256')
        self.preprocessing = (
            None
            if self.metadata.get('mlkd.normalization') == 'folded'
            else Preprocessing(meta['mlkd.mean'], meta['mlkd.std'], bool(meta['mlkd.to_rgb']))
        )

    def scores(self, images: np.ndarray) -> np.ndarray:
        """``images [B, 3, H, W]`` (pixels as the test pipeline leaves them) → float32
        ``[B, C]`` scores.

        Raises:
            ValueError: naming both shapes when an image is not ``input_shape``.
        """
        images = np.asarray(images)
        if images.ndim != 4 or tuple(images.shape[1:]) != self.input_shape:
            raise ValueError(
                f'{self.name} takes images of shape {list(self.input_shape)} (channels, height, '
                f'width) after the test pipeline, got a batch of shape {list(images.shape)}; '
                'resize the images, or export from a config whose test pipeline resizes'
            )
        if self.preprocessing is not None:
            images = self.preprocessing.apply(images)
        images = np.ascontiguousarray(images, dtype=np.float32)
        return self.session.run([OUTPUT_NAME], {INPUT_NAME: images})[0]
