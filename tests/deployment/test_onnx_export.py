"""ONNX export of a classifier (mlkd/deployment/onnx_export.py) run by ONNX Runtime
(mlkd/deployment/onnx_runtime.py): the ML-Decoder student's sigmoid scores match PyTorch's own
``predict`` within 1e-4 at any batch size, with the normalisation folded in or left outside."""

import json

import numpy as np
import pytest
import torch
from helpers import DIGIT_CLASSES, digits_classifier, export_score_model, random_images

from mlkd.apis.inference import torch_scores
from mlkd.deployment import OnnxClassifier, Preprocessing
from mlkd.deployment.onnx_export import score_activation


@pytest.fixture
def network():
    """The demo's ML-Decoder student (random weights)."""
    return digits_classifier('mldecoder_student.py')


@pytest.mark.parametrize('fold', [True, False], ids=['folded', 'external'])
def test_ml_decoder_scores_match_pytorch_at_any_batch_size(network, fold):
    assert score_activation(network) == 'sigmoid'
    onnx_model = OnnxClassifier(export_score_model(network, fold))
    assert onnx_model.classes == DIGIT_CLASSES
    assert (onnx_model.preprocessing is None) == fold
    images = random_images(7)
    reference = torch_scores(network, images)  # the model's own preprocessor + predict
    assert reference.min() > 0 and reference.max() < 1
    batch = torch.stack(images).numpy()
    for size in (1, 3, 7):
        scores = onnx_model.scores(batch[:size])
        assert scores.shape == (size, 10)
        np.testing.assert_allclose(scores, reference[:size], rtol=0, atol=1e-4)


@pytest.mark.parametrize('fold', [True, False], ids=['folded', 'external'])
def test_the_flip_and_the_normalisation_are_applied(fold):
    """On a network whose scores depend on the image (a random ML-Decoder's barely do): the
    scores match, and would not without the flip."""
    network = digits_classifier('resnet_student.py')
    onnx_model = OnnxClassifier(export_score_model(network, fold))
    images = random_images(4)
    reference = torch_scores(network, images)
    batch = torch.stack(images).numpy()
    np.testing.assert_allclose(onnx_model.scores(batch), reference, rtol=0, atol=1e-4)
    # 10x the tolerance: a missed flip fails the 1e-4 check
    assert np.abs(onnx_model.scores(batch[:, ::-1].copy()) - reference).max() > 1e-3


def test_metadata_and_bad_inputs(network, tmp_path):
    data = export_score_model(network, fold=True)
    path = tmp_path / 'm.onnx'
    path.write_bytes(data)
    onnx_model = OnnxClassifier(str(path))
    assert onnx_model.input_shape == (3, 32, 32)
    assert json.loads(onnx_model.metadata['mlkd.mean']) == [10.0, 120.0, 200.0]
    with pytest.raises(ValueError, match=r'takes images of shape \[3, 32, 32\].*\[2, 3, 40, 40\]'):
        onnx_model.scores(np.zeros((2, 3, 40, 40), np.float32))
    not_onnx = tmp_path / 'x.onnx'
    not_onnx.write_bytes(b'\x00 not a protobuf at all')
    with pytest.raises(ValueError, match='x.onnx.*not an ONNX model'):
        OnnxClassifier(str(not_onnx))
    with pytest.raises(FileNotFoundError, match='missing.onnx'):
        OnnxClassifier(str(tmp_path / 'missing.onnx'))


def test_padding_preprocessors_are_refused():
    class Padding(torch.nn.Module):
        pad_size_divisor = 32

    with pytest.raises(NotImplementedError, match='pad_size_divisor=32'):
        Preprocessing.from_preprocessor(Padding())
