"""float16 and int8 variants of an exported model (mlkd/deployment/precision.py): they run in
ONNX Runtime, keep the mlkd metadata, shrink the file and stay close to the float32 scores."""

import numpy as np
import pytest
import torch
from helpers import digits_classifier, export_score_model, random_images

from mlkd.deployment import OnnxClassifier, convert_precision


@pytest.mark.parametrize('precision, atol', [('fp16', 2e-2), ('int8', 0.25)])
def test_converted_models_run_and_keep_the_metadata(precision, atol):
    data = export_score_model(digits_classifier('resnet_student.py'), fold=True)
    converted = convert_precision(data, precision)
    assert len(converted) < 0.7 * len(data)
    model, reference = OnnxClassifier(converted), OnnxClassifier(data)
    assert model.metadata['mlkd.precision'] == precision
    assert model.classes == reference.classes
    batch = torch.stack(random_images(3)).numpy()
    scores = model.scores(batch)
    assert scores.dtype == np.float32 and scores.shape == (3, 10)
    np.testing.assert_allclose(scores, reference.scores(batch), rtol=0, atol=atol)


def test_unknown_precisions_are_refused():
    with pytest.raises(ValueError, match="precision must be one of \\('fp32', 'fp16', 'int8'\\)"):
        convert_precision(b'', 'int4')
