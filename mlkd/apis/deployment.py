"""Ship a trained classifier: ONNX export checked by ONNX Runtime (:func:`export_onnx`) and
per-class thresholds calibrated on the validation split (:func:`calibrate_thresholds`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import torch
from mmengine.config import Config

from mlkd.utils.fingerprint import fingerprint

from .inference import (
    LoadedClassifier,
    config_test_pipeline,
    init_classifier,
    split_scores,
    torch_scores,
)

__all__ = [
    'OnnxCheckError',
    'OnnxExport',
    'calibrate_thresholds',
    'check_onnx_scores',
    'export_onnx',
    'threshold_report',
]

#: Largest |Δ| of the scores between PyTorch and ONNX Runtime that the export accepts.
DEFAULT_TOLERANCE = 1e-4


class OnnxCheckError(RuntimeError):
    """ONNX Runtime's scores differ from PyTorch's by more than the tolerance."""


@dataclass
class OnnxExport:
    """What :func:`export_onnx` wrote and measured.

    Attributes:
        path: the ONNX file.
        size_bytes: its size.
        max_abs_diff: largest |ONNX Runtime − PyTorch| over the checked images' scores.
        num_images: how many test images were compared (in one batch, and the first alone).
        input_shape: ``(3, H, W)``.
        classes: class names; ``activation``: ``'sigmoid'`` or ``'softmax'``.
        precision: ``'fp32'``, ``'fp16'`` or ``'int8'`` (:mod:`mlkd.deployment.precision`).
        converted_max_abs_diff: for fp16 / int8, the converted file's largest |Δ| against
            PyTorch on the same images (reported, not bounded: the tolerance holds for the
            float32 graph it was converted from).
        test_map: for fp16 / int8, mAP (%) on the config's whole test split of the float32 and
            the converted file, both run by ONNX Runtime: ``{'fp32': ..., precision: ...}``.
        fp32_size_bytes: for fp16 / int8, the size of the float32 file.
    """

    path: str
    size_bytes: int
    max_abs_diff: float
    num_images: int
    input_shape: tuple[int, ...]
    classes: list[str]
    activation: str
    metadata: dict = field(default_factory=dict)
    precision: str = 'fp32'
    converted_max_abs_diff: float | None = None
    test_map: dict[str, float] | None = None
    fp32_size_bytes: int | None = None


def _test_inputs(classifier: LoadedClassifier, num_images: int) -> list[torch.Tensor]:
    """The first ``num_images`` images of the config's test split through its test pipeline."""
    from mmengine.registry import DefaultScope

    from mlkd.registry import DATASETS

    if num_images < 1:
        raise ValueError(f'num_images must be >= 1, got {num_images}')
    with DefaultScope.overwrite_default_scope('mlkd'):
        dataset = DATASETS.build(classifier.cfg.test_dataloader.dataset)
    count = min(num_images, len(dataset))
    if count == 0:
        raise ValueError(f'{classifier.config}: the test split is empty')
    inputs = [dataset[i]['inputs'] for i in range(count)]
    shapes = {tuple(x.shape) for x in inputs}
    if len(shapes) > 1:
        raise ValueError(
            f'{classifier.config}: the test pipeline gives images of several shapes {sorted(shapes)}; '
            'the ONNX graph takes one (add a Resize / CenterCrop to the test pipeline)'
        )
    return inputs


def check_onnx_scores(onnx_model, network: torch.nn.Module, inputs: list[torch.Tensor]) -> float:
    """Largest |Δ| between ONNX Runtime's scores and the PyTorch model's own ``pred_score``
    (data preprocessor + ``predict``) on ``inputs``: all in one batch, and the first alone
    (which exercises the dynamic batch axis)."""
    reference = torch_scores(network, inputs)
    batch = torch.stack(inputs).numpy()
    full = onnx_model.scores(batch)
    single = onnx_model.scores(batch[:1])
    if full.shape != reference.shape:
        raise OnnxCheckError(f'ONNX scores have shape {full.shape}, PyTorch {reference.shape}')
    return float(max(np.abs(full - reference).max(), np.abs(single - reference[:1]).max()))


def export_onnx(
    config: str | Config,
    checkpoint: str,
    out: str,
    *,
    cfg_options: dict | None = None,
    num_images: int = 16,
    fold_normalization: bool = True,
    opset: int | None = None,
    exporter: str = 'torchscript',
    tolerance: float = DEFAULT_TOLERANCE,
    precision: str = 'fp32',
    overwrite: bool = False,
) -> OnnxExport:
    """Export the network ``config`` deploys (a distillation config's student) to ``out``.

    The graph and its metadata are described in :mod:`mlkd.deployment.onnx_export`. Before
    anything is written, ONNX Runtime scores the first ``num_images`` test images (the config's
    test pipeline) and the largest |Δ| against PyTorch must be ``<= tolerance``; the file is then
    written atomically. With ``precision`` ``'fp16'`` or ``'int8'`` the checked float32 graph is
    converted (:func:`mlkd.deployment.convert_precision`), and the converted file is what is
    written; the test-split mAP of both is measured (:class:`OnnxExport`).

    Raises:
        OutputExistsError, OutputIsInputError: ``out`` exists (without ``overwrite``), or is an
            input; checked before any work.
        OnnxCheckError: the scores differ by more than ``tolerance`` (nothing written).
        ValueError: see :func:`~mlkd.apis.inference.init_classifier` (another config's
            checkpoint, ...).
    """
    import mlkd
    from mlkd.deployment import OnnxClassifier, Preprocessing, ScoreModel, export_onnx_bytes
    from mlkd.deployment.onnx_export import DEFAULT_OPSET, FORMAT_VERSION, score_activation
    from mlkd.utils.output_policy import check_output, open_output

    inputs_paths = [c for c in (config, checkpoint) if isinstance(c, str)]
    check_output(out, inputs=inputs_paths, overwrite=overwrite)
    classifier = init_classifier(config, checkpoint, cfg_options)
    network = classifier.network
    inputs = _test_inputs(classifier, num_images)
    preprocessing = Preprocessing.from_preprocessor(network.data_preprocessor)
    activation = score_activation(network)
    input_shape = tuple(int(v) for v in inputs[0].shape)
    metadata = {
        'mlkd.format': FORMAT_VERSION,
        'mlkd.classes': classifier.classes,
        'mlkd.activation': activation,
        'mlkd.normalization': 'folded' if fold_normalization else 'external',
        'mlkd.mean': preprocessing.mean,
        'mlkd.std': preprocessing.std,
        'mlkd.to_rgb': preprocessing.to_rgb,
        'mlkd.input_shape': list(input_shape),
        'mlkd.test_pipeline': config_test_pipeline(classifier.cfg),
        'mlkd.config': classifier.config,
        'mlkd.config_sha256': fingerprint(classifier.cfg),
        'mlkd.checkpoint': os.path.abspath(classifier.checkpoint),
        'mlkd.version': mlkd.__version__,
    }
    graph = ScoreModel(network, preprocessing if fold_normalization else None, activation)
    data = export_onnx_bytes(
        graph, input_shape, metadata, opset=opset or DEFAULT_OPSET, exporter=exporter
    )
    onnx_model = OnnxClassifier(data, name=out)
    max_abs_diff = check_onnx_scores(onnx_model, network, inputs)
    if not max_abs_diff <= tolerance:
        raise OnnxCheckError(
            f'ONNX Runtime scores differ from PyTorch by up to {max_abs_diff:.3g} on '
            f'{len(inputs)} test images (tolerance {tolerance:g}); {out!r} not written'
        )
    result = OnnxExport(
        path=out,
        size_bytes=len(data),
        max_abs_diff=max_abs_diff,
        num_images=len(inputs),
        input_shape=input_shape,
        classes=classifier.classes,
        activation=activation,
        metadata=metadata,
    )
    if precision != 'fp32':
        data = _converted(classifier, onnx_model, data, precision, inputs, result)
    with open_output(out, 'wb', inputs=inputs_paths, overwrite=overwrite) as file:
        file.write(data)
    return result


def _converted(
    classifier: LoadedClassifier, fp32_model, fp32_data: bytes, precision: str, inputs, result
) -> bytes:
    """The ``precision`` version of the float32 model, with its |Δ|, test-split mAP and size
    recorded in ``result``."""
    from mlkd.deployment import OnnxClassifier, convert_precision
    from mlkd.evaluation.metrics.functional import mean_average_precision

    data = convert_precision(fp32_data, precision)
    model = OnnxClassifier(data, name=f'{result.path} ({precision})')
    result.precision = precision
    result.converted_max_abs_diff = check_onnx_scores(model, classifier.network, inputs)
    result.test_map = {}
    for name, runner in (('fp32', fp32_model), (precision, model)):
        scores, targets = split_scores(
            classifier,
            'test',
            score_batch=lambda batch, m=runner: m.scores(torch.stack(batch).numpy()),
        )
        result.test_map[name] = mean_average_precision(
            torch.from_numpy(scores), torch.from_numpy(targets)
        )
    result.fp32_size_bytes, result.size_bytes = len(fp32_data), len(data)
    return data


def threshold_report(
    scores: np.ndarray, targets: np.ndarray, thresholds: np.ndarray, default: float = 0.5
) -> dict[str, dict[str, float]]:
    """CP, CR, CF1, OP, OR, OF1 (percent; CF1 the harmonic mean of CP and CR, and ``CF1macro``
    the mean of per-class F1) at ``default`` for every class and at the per-class
    ``thresholds``: ``{'default': {...}, 'calibrated': {...}}``."""
    from mlkd.evaluation.metrics.functional import multilabel_prf

    scores_t = torch.from_numpy(np.asarray(scores, dtype=np.float64))
    targets_t = torch.from_numpy(np.asarray(targets))
    report = {}
    for name, thr in (('default', default), ('calibrated', torch.from_numpy(thresholds))):
        values = multilabel_prf(scores_t, targets_t, 'threshold', thr=thr)
        macro = multilabel_prf(scores_t, targets_t, 'threshold', thr=thr, cf1_mode='macro')
        report[name] = dict(values, CF1macro=macro['CF1'])
    return report


def calibrate_thresholds(
    config: str | Config,
    checkpoint: str,
    out: str,
    *,
    cfg_options: dict | None = None,
    default: float = 0.5,
    calibration_split: str = 'val',
    report_splits: tuple[str, ...] = ('val', 'test'),
    overwrite: bool = False,
) -> dict:
    """Per-class F1-optimal thresholds on ``calibration_split`` (rules:
    :mod:`mlkd.evaluation.thresholds`), written to ``out`` (JSON, checked before any work).

    Returns:
        the file's record, with ``metrics``: ``{split: {'default' | 'calibrated': {CP, CR, CF1,
        CF1macro, OP, OR, OF1}}}`` for ``report_splits`` (also written to the file: the test
        numbers are a report, never an input to the choice). A report split whose dataset is the
        calibration split's (a config with ``test_dataloader = val_dataloader``) would report
        in-sample numbers: it is left out, named under ``not_reported``.
    """
    from mlkd.evaluation.thresholds import f1_optimal_thresholds, save_thresholds, thresholds_record
    from mlkd.utils.output_policy import check_output

    inputs_paths = [c for c in (config, checkpoint) if isinstance(c, str)]
    check_output(out, inputs=inputs_paths, overwrite=overwrite)
    classifier = init_classifier(config, checkpoint, cfg_options)

    def dataset(split: str) -> dict | None:
        return classifier.cfg.get(f'{split}_dataloader', {}).get('dataset')

    in_sample = {
        split: f'the data of {calibration_split} (in-sample)'
        for split in report_splits
        if split != calibration_split and dataset(split) == dataset(calibration_split)
    }
    report_splits = tuple(split for split in report_splits if split not in in_sample)
    splits = dict.fromkeys((calibration_split, *report_splits))
    data = {split: split_scores(classifier, split) for split in splits}
    calibration = f1_optimal_thresholds(*data[calibration_split], default=default)
    metrics = {
        split: threshold_report(*data[split], calibration.thresholds, default)
        for split in report_splits
    }
    record = thresholds_record(
        calibration,
        classifier.classes,
        dict(
            split=calibration_split,
            num_samples=int(len(data[calibration_split][0])),
            config=classifier.config,
            config_sha256=fingerprint(classifier.cfg),
            checkpoint=os.path.abspath(classifier.checkpoint),
            metrics=metrics,
            **({'not_reported': in_sample} if in_sample else {}),
        ),
    )
    save_thresholds(out, record, inputs=inputs_paths, overwrite=overwrite)
    return record
