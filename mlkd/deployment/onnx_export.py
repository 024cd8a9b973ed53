"""A classifier as an ONNX graph from images to scores, with what a deployer needs as metadata.

The graph (:class:`ScoreModel`) takes a float batch ``images [B, 3, H, W]`` (dynamic ``B``) and
returns ``scores [B, C]``: sigmoid probabilities for a multi-label head (mmpretrain's
``MultiLabelClsHead`` family, ML-Decoder included), softmax for a single-label head, exactly what
the PyTorch model's ``predict`` stores as ``pred_score``.

The data preprocessor's work (channel flip ``to_rgb``, ``(x - mean) / std``) is either

* **folded** into the graph (default): ``images`` are the pixels as the test pipeline leaves them
  (0..255, the loader's channel order, BGR for OpenCV), or
* **external**: ``images`` are already normalised; the metadata's ``mean``, ``std`` and
  ``to_rgb`` say how (:meth:`Preprocessing.apply` does it in numpy).

Metadata (ONNX ``metadata_props``, all strings, JSON where structured; read back by
:class:`mlkd.deployment.onnx_runtime.OnnxClassifier`): ``mlkd.format``, ``mlkd.classes``,
``mlkd.activation``, ``mlkd.normalization`` (``folded`` / ``external``), ``mlkd.mean``,
``mlkd.std``, ``mlkd.to_rgb``, ``mlkd.input_shape`` (``[3, H, W]``), ``mlkd.test_pipeline`` (the
config's test pipeline, so that the file alone can label image files), and provenance
(``mlkd.config``, ``mlkd.config_sha256``, ``mlkd.checkpoint``, ``mlkd.version``).

Two exporters: ``'torchscript'`` (default), PyTorch's TorchScript-based ``torch.onnx.export(...,
dynamo=False)``, which needs nothing beyond torch (``onnx`` only attaches the metadata), and
``'dynamo'``, the ``torch.export``-based exporter that PyTorch now defaults to, which also needs the
``onnxscript`` and ``onnx-ir`` packages. Both reproduce the trained demo student's scores in ONNX
Runtime to 3e-6. The default is the one with the fewest packages; the TorchScript exporter is deprecated
upstream, and ``'dynamo'`` is the way forward if it is removed.
"""

from __future__ import annotations

import io
import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

__all__ = [
    'EXPORTERS',
    'FORMAT_VERSION',
    'INPUT_NAME',
    'OUTPUT_NAME',
    'Preprocessing',
    'ScoreModel',
    'export_onnx_bytes',
    'score_activation',
]

INPUT_NAME = 'images'
OUTPUT_NAME = 'scores'
#: ``mlkd.format`` of the files written here.
FORMAT_VERSION = '1'
EXPORTERS = ('torchscript', 'dynamo')
#: The lowest opset whose operators cover the shipped networks (LayerNormalization: 17).
DEFAULT_OPSET = 17


@dataclass
class Preprocessing:
    """What a ``ClsDataPreprocessor`` does to a batch at test time: optional BGR↔RGB flip of
    3-channel images, then ``(x - mean) / std`` (mean 0, std 1 when it does not normalise)."""

    mean: list[float]
    std: list[float]
    to_rgb: bool

    @classmethod
    def from_preprocessor(cls, preprocessor: nn.Module) -> Preprocessing:
        """Read it from an mmpretrain ``ClsDataPreprocessor`` (or a subclass).

        Raises:
            NotImplementedError: for padding to a size divisor (not reproduced by the export).
        """
        if getattr(preprocessor, 'pad_size_divisor', 1) > 1:
            raise NotImplementedError(
                'the data preprocessor pads to pad_size_divisor='
                f'{preprocessor.pad_size_divisor}; ONNX export supports no padding (set '
                'data_preprocessor.pad_size_divisor=1 with a test pipeline of fitting size)'
            )
        if getattr(preprocessor, '_enable_normalize', False):
            mean = preprocessor.mean.flatten().tolist()
            std = preprocessor.std.flatten().tolist()
        else:
            mean, std = [0.0], [1.0]
        return cls(mean=mean, std=std, to_rgb=bool(getattr(preprocessor, 'to_rgb', False)))

    def apply(self, images: np.ndarray) -> np.ndarray:
        """``images [B, C, H, W]`` (pipeline pixels) → the normalised float32 batch."""
        images = np.asarray(images, dtype=np.float32)
        if self.to_rgb and images.shape[1] == 3:
            images = images[:, ::-1]
        mean = np.asarray(self.mean, np.float32).reshape(1, -1, 1, 1)
        std = np.asarray(self.std, np.float32).reshape(1, -1, 1, 1)
        return np.ascontiguousarray((images - mean) / std, dtype=np.float32)


def score_activation(classifier: nn.Module) -> str:
    """``'sigmoid'`` for a multi-label head (mmpretrain's ``MultiLabelClsHead`` family, which
    ``MLDecoderHead`` belongs to), else ``'softmax'`` (``ClsHead``'s ``pred_score``)."""
    from mmpretrain.models.heads import MultiLabelClsHead

    return (
        'sigmoid' if isinstance(getattr(classifier, 'head', None), MultiLabelClsHead) else 'softmax'
    )


class ScoreModel(nn.Module):
    """``images [B, 3, H, W]`` → ``scores [B, C]``: preprocessing (when folded), the classifier's
    ``mode='tensor'`` forward (logits) and the head's activation.

    Args:
        classifier: an mmpretrain-style classifier (``forward(x, mode='tensor')`` gives logits).
        preprocessing: folded into the graph when given; ``None`` takes normalised inputs.
        activation: ``'sigmoid'`` or ``'softmax'`` (:func:`score_activation`).
    """

    def __init__(
        self, classifier: nn.Module, preprocessing: Preprocessing | None, activation: str
    ) -> None:
        super().__init__()
        if activation not in ('sigmoid', 'softmax'):
            raise ValueError(f"activation must be 'sigmoid' or 'softmax', got {activation!r}")
        self.classifier = classifier
        self.activation = activation
        self.fold = preprocessing is not None
        self.to_rgb = bool(preprocessing and preprocessing.to_rgb)
        mean = preprocessing.mean if preprocessing else [0.0]
        std = preprocessing.std if preprocessing else [1.0]
        self.register_buffer('mean', torch.tensor(mean).view(1, -1, 1, 1), persistent=False)
        self.register_buffer('std', torch.tensor(std).view(1, -1, 1, 1), persistent=False)

    def forward(self, images: Tensor) -> Tensor:
        x = images
        if self.fold:
            if self.to_rgb and x.shape[1] == 3:
                x = x.flip(1)
            x = (x - self.mean) / self.std
        logits = self.classifier(x, mode='tensor')
        return torch.sigmoid(logits) if self.activation == 'sigmoid' else logits.softmax(dim=1)


def _torchscript_export(model: nn.Module, example: Tensor, opset: int) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        # The TorchScript exporter is deprecated upstream; the choice is documented above.
        warnings.simplefilter('ignore', DeprecationWarning)
        warnings.filterwarnings('ignore', category=torch.jit.TracerWarning)
        torch.onnx.export(
            model,
            (example,),
            buffer,
            input_names=[INPUT_NAME],
            output_names=[OUTPUT_NAME],
            dynamic_axes={INPUT_NAME: {0: 'batch'}, OUTPUT_NAME: {0: 'batch'}},
            opset_version=opset,
            dynamo=False,
        )
    return buffer.getvalue()


def _dynamo_export(model: nn.Module, example: Tensor, opset: int) -> bytes:
    try:
        import onnxscript  # noqa: F401
    except ImportError:
        raise ModuleNotFoundError(
            "the 'dynamo' exporter needs the onnxscript package: pip install onnxscript "
            "(or use the default 'torchscript' exporter)"
        ) from None
    program = torch.onnx.export(
        model,
        (example,),
        input_names=[INPUT_NAME],
        output_names=[OUTPUT_NAME],
        dynamic_shapes={'images': {0: torch.export.Dim('batch')}},
        opset_version=max(opset, 18),
        dynamo=True,
        verbose=False,
    )
    return program.model_proto.SerializeToString()


def export_onnx_bytes(
    model: ScoreModel,
    input_shape: Sequence[int],
    metadata: Mapping[str, object],
    *,
    opset: int = DEFAULT_OPSET,
    exporter: str = 'torchscript',
) -> bytes:
    """The serialised ONNX model of ``model`` with ``metadata`` attached.

    Args:
        model: the graph to export (put in ``eval()`` here).
        input_shape: ``(3, H, W)`` of one image; the batch axis is dynamic.
        metadata: ``key -> value``; strings are stored as they are, anything else as JSON.
        opset: ONNX opset (the dynamo exporter uses at least 18).
        exporter: ``'torchscript'`` or ``'dynamo'`` (module docstring).
    """
    import onnx

    if exporter not in EXPORTERS:
        raise ValueError(f'exporter must be one of {EXPORTERS}, got {exporter!r}')
    model.eval()
    example = torch.zeros(2, *input_shape)
    with torch.no_grad():
        if exporter == 'torchscript':
            data = _torchscript_export(model, example, opset)
        else:
            data = _dynamo_export(model, example, opset)
    proto = onnx.load_from_string(data)
    del proto.metadata_props[:]
    for key, value in metadata.items():
        entry = proto.metadata_props.add()
        entry.key = key
        entry.value = value if isinstance(value, str) else json.dumps(value)
    return proto.SerializeToString()
