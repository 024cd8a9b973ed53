"""Run a trained classifier: from a config + checkpoint or from its ONNX export, on image files,
image folders and image lists, or on a split of the config's dataset.

* :func:`init_classifier` builds the network a config deploys (the student of a distillation
  config, the classifier of a ``ClassifierWithLosses``, else the model) with the config's data
  preprocessor, and loads a checkpoint into it strictly: a distillation checkpoint (its
  ``student.*``), a file of ``tools/export_student.py``, or a classifier's checkpoint
  (:func:`mlkd.models.weights.load_network_checkpoint` knows the layouts).
* :class:`ImageLabeler` scores and labels images with either backend through the same steps: the
  file decoded as the config's ``LoadImageFromFile`` would (OpenCV, BGR, unless the config says
  otherwise), the rest of the config's test pipeline, then the network (PyTorch: the model's own
  ``test_step``; ONNX Runtime: :class:`mlkd.deployment.OnnxClassifier`, whose file carries the
  pipeline in its metadata).
* :func:`split_scores` gives the scores and targets of a config's ``val`` / ``test`` split.
"""

from __future__ import annotations

import csv
import io
import json
import os
import os.path as osp
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from mmengine.config import Config
from torch import nn

from mlkd.utils.fingerprint import fingerprint

__all__ = [
    'IMAGE_EXTENSIONS',
    'ImageDecodeError',
    'ImageLabeler',
    'LoadedClassifier',
    'build_classifier',
    'classifier_config',
    'config_test_pipeline',
    'init_classifier',
    'label_images',
    'list_images',
    'save_labels',
    'split_scores',
]

#: Files a folder contributes (lower-case suffixes).
IMAGE_EXTENSIONS = ('.jpg', '.jpeg', '.png', '.bmp', '.ppm', '.pgm', '.tif', '.tiff', '.webp')
#: Inputs read as image lists (one image path per line, relative to the list's folder).
LIST_EXTENSIONS = ('.txt', '.lst')


class ImageDecodeError(ValueError):
    """An input file is not an image that can be decoded."""


def _as_config(config: str | Config, cfg_options: dict | None) -> Config:
    if isinstance(config, Config):
        if cfg_options:
            config = Config(config.to_dict())
            config.merge_from_dict(cfg_options)
        return config
    from mlkd.utils.cli import load_config

    return load_config(config, cfg_options)


def classifier_config(cfg: Config) -> tuple[dict | str, str]:
    """The model config of the network ``cfg`` deploys and its role: ``cfg.model.student``
    (distillation), ``cfg.model.classifier`` (``ClassifierWithLosses``), else ``cfg.model``."""
    model = cfg.model
    for role in ('student', 'classifier'):
        if role in model:
            network = model[role]
            return (network if isinstance(network, str) else dict(network)), role
    return dict(model), 'classifier'


def _preprocessor_config(cfg: Config) -> dict | None:
    """The data preprocessor the Runner gives the model: the model's own, else the top-level
    one (mmengine's ``model.setdefault('data_preprocessor', ...)``)."""
    preprocessor = cfg.model.get('data_preprocessor') or cfg.get('data_preprocessor')
    if preprocessor is None:
        return None
    preprocessor = dict(preprocessor)
    preprocessor.setdefault('type', 'mmpretrain.ClsDataPreprocessor')
    return preprocessor


def config_test_pipeline(cfg: Config) -> list[dict]:
    """The test pipeline of ``cfg``: its ``test_dataloader``'s dataset's (through dataset
    wrappers), else ``cfg.test_pipeline``.

    Raises:
        KeyError: when the config has neither.
    """
    dataset = cfg.get('test_dataloader', {}).get('dataset')
    while dataset is not None:
        if 'pipeline' in dataset:
            return [dict(step) for step in dataset['pipeline']]
        dataset = dataset.get('dataset')
    if 'test_pipeline' in cfg:
        return [dict(step) for step in cfg.test_pipeline]
    raise KeyError(f'{cfg.filename}: no test_dataloader.dataset.pipeline and no test_pipeline')


def _config_classes(cfg: Config) -> list[str] | None:
    """Class names of the config's test dataset, read without building it (``classes``,
    ``metainfo.classes``, or the dataset class's ``METAINFO``)."""
    from mlkd.registry import DATASETS

    dataset = cfg.get('test_dataloader', {}).get('dataset') or {}
    classes = dataset.get('classes') or (dataset.get('metainfo') or {}).get('classes')
    if isinstance(classes, (list, tuple)):
        return [str(c) for c in classes]
    dataset_class = DATASETS.get(dataset.get('type', '')) if dataset.get('type') else None
    classes = getattr(dataset_class, 'METAINFO', {}).get('classes')
    return [str(c) for c in classes] if classes else None


@dataclass
class LoadedClassifier:
    """A network loaded by :func:`init_classifier`, in ``eval()``, and where it came from.

    Attributes:
        network: the classifier, its ``data_preprocessor`` the config's.
        cfg: the resolved config (``--cfg-options`` applied).
        classes: class names (checkpoint meta, else the config's dataset, else ``'0'..``).
        config: the config as given; ``checkpoint``: the file loaded.
        role: ``'student'`` or ``'classifier'``.
    """

    network: nn.Module
    cfg: Config
    classes: list[str]
    config: str
    checkpoint: str
    role: str


def build_classifier(
    config: str | Config, cfg_options: dict | None = None
) -> tuple[nn.Module, Config, str]:
    """The network ``config`` deploys (:func:`classifier_config`) with the config's data
    preprocessor, its initial weights (init_cfg not applied), in ``eval()``.

    Returns:
        ``(network, resolved config, role)``.
    """
    from mmengine.registry import DefaultScope

    from mlkd.models.builder import build_network
    from mlkd.registry import MODELS, register_all_modules

    cfg = _as_config(config, cfg_options)
    register_all_modules(init_default_scope=False)
    network_cfg, role = classifier_config(cfg)
    with DefaultScope.overwrite_default_scope('mlkd'):
        network = build_network(network_cfg, role)
        preprocessor = _preprocessor_config(cfg)
        if preprocessor is not None:
            network.data_preprocessor = MODELS.build(preprocessor)
    return network.eval(), cfg, role


def init_classifier(
    config: str | Config,
    checkpoint: str,
    cfg_options: dict | None = None,
    device: str | torch.device = 'cpu',
) -> LoadedClassifier:
    """Build the network ``config`` deploys (:func:`build_classifier`) and load ``checkpoint``
    into it strictly.

    Args:
        config: a config path, ``mlkd::<path under configs/>``, or a loaded Config.
        checkpoint: a checkpoint file or a work dir (its last checkpoint).
        cfg_options: ``--cfg-options`` to apply.
        device: where the network runs.

    Raises:
        FileNotFoundError: config or checkpoint missing.
        ValueError: the checkpoint does not fit the network (another config's checkpoint): the
            message names the checkpoint, the config and the missing / unexpected /
            mis-shaped keys; or it holds NaN / inf weights; or it records class names other
            than those of the config's test dataset (naming both).
    """
    from mlkd.models.weights import (
        checkpoint_classes,
        load_network_checkpoint,
        resolve_checkpoint,
        show_keys,
    )

    name = config if isinstance(config, str) else (config.filename or 'the config')
    checkpoint = resolve_checkpoint(checkpoint, 'checkpoint')
    network, cfg, role = build_classifier(config, cfg_options)
    load_network_checkpoint(network, checkpoint, f'{role} of {name}')
    recorded = checkpoint_classes(checkpoint, f'{role} of {name}')
    configured = _config_classes(cfg)
    if recorded and configured and list(recorded) != list(configured):
        raise ValueError(
            f'{checkpoint} was trained on the classes {show_keys(recorded, 6)}, but the test '
            f'dataset of {name} has {show_keys(configured, 6)}: its scores would be read '
            'against other classes (another dataset, or another class order); use the config '
            'it was trained with'
        )
    classes = recorded or configured
    num_classes = getattr(getattr(network, 'head', None), 'num_classes', None)
    if num_classes is not None and (classes is None or len(classes) != num_classes):
        classes = [str(i) for i in range(num_classes)]
    return LoadedClassifier(
        network=network.to(device).eval(),
        cfg=cfg,
        classes=list(classes or []),
        config=str(name),
        checkpoint=checkpoint,
        role=role,
    )


@torch.no_grad()
def torch_scores(network: nn.Module, inputs: Sequence[torch.Tensor]) -> np.ndarray:
    """``pred_score`` of the model's own ``test_step`` (preprocessor + predict) on a batch of
    pipeline outputs (``[3, H, W]`` each) → float32 ``[B, C]``."""
    samples = network.test_step({'inputs': list(inputs)})
    return torch.stack([s.pred_score for s in samples]).float().cpu().numpy()


@torch.no_grad()
def split_scores(
    classifier: LoadedClassifier,
    split: str,
    batch_size: int | None = None,
    score_batch: Callable[[list[torch.Tensor]], np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Scores and targets of the config's ``split`` (``'val'`` or ``'test'``), in order.

    Args:
        classifier: the network and its config (:func:`init_classifier`).
        split: which ``<split>_dataloader`` of the config.
        batch_size: overrides the loader's.
        score_batch: scores a batch of pipeline outputs (e.g. ONNX Runtime); default: the
            network's own ``test_step``.

    Returns:
        ``scores`` float32 ``[N, C]`` (``pred_score``: sigmoid probabilities for multi-label
        heads) and ``targets`` int8 ``[N, C]`` (1 / 0 / -1 ignored, the data preprocessor's
        ``gt_score``, as the metrics read it).
    """
    from mmengine.registry import DefaultScope
    from mmengine.runner import Runner

    from mlkd.utils.targets import sample_target

    key = f'{split}_dataloader'
    if key not in classifier.cfg:
        raise KeyError(f'{classifier.config}: no {key} in the config')
    loader_cfg = classifier.cfg[key].copy()
    loader_cfg.sampler = dict(type='DefaultSampler', shuffle=False)
    loader_cfg.num_workers, loader_cfg.persistent_workers = 0, False
    if batch_size is not None:
        loader_cfg.batch_size = batch_size
    with DefaultScope.overwrite_default_scope('mlkd'):
        loader = Runner.build_dataloader(loader_cfg)
    network = classifier.network
    scores, targets = [], []
    for batch in loader:
        if score_batch is None:
            samples = network.test_step(batch)
            scores.append(torch.stack([s.pred_score for s in samples]).float().cpu().numpy())
        else:
            samples = network.data_preprocessor(batch)['data_samples']
            scores.append(np.asarray(score_batch(batch['inputs']), dtype=np.float32))
        num_classes = scores[-1].shape[1]
        targets.append(torch.stack([sample_target(s, num_classes).cpu() for s in samples]))
    return np.concatenate(scores), torch.sign(torch.cat(targets)).to(torch.int8).numpy()


# ---------------------------------------------------------------------------------------------
# Image inputs
# ---------------------------------------------------------------------------------------------


def _read_image_list(path: str) -> list[str]:
    folder = osp.dirname(osp.abspath(path))
    images = []
    with open(path, encoding='utf-8') as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            image = line.split()[0]  # MultiLabelImageList lines carry labels after the path
            image = image if osp.isabs(image) else osp.join(folder, image)
            if not osp.isfile(image):
                raise FileNotFoundError(f'{path}, line {number}: image not found: {image!r}')
            images.append(image)
    return images


def list_images(inputs: str | Sequence[str]) -> list[str]:
    """The image files named by ``inputs``, in order.

    Each input is an image file; a folder (its files with an :data:`IMAGE_EXTENSIONS` suffix,
    sub-folders included, sorted); or an image list (``.txt`` / ``.lst``: one path per line,
    relative to the list's folder unless absolute; ``#`` comments, blank lines and anything after
    the path, such as labels, ignored).

    Raises:
        FileNotFoundError: an input, or a listed image, does not exist (named with the list's line).
        ValueError: a folder or a list holds no images, or nothing was given.
    """
    inputs = [inputs] if isinstance(inputs, str) else list(inputs)
    if not inputs:
        raise ValueError('no images given (image files, folders or image lists)')
    images: list[str] = []
    for item in inputs:
        if osp.isdir(item):
            found = sorted(
                osp.join(root, name)
                for root, _, names in os.walk(item)
                for name in names
                if name.lower().endswith(IMAGE_EXTENSIONS)
            )
            if not found:
                raise ValueError(
                    f'folder {item!r} holds no image files (suffixes {", ".join(IMAGE_EXTENSIONS)})'
                )
            images += found
        elif osp.isfile(item) and item.lower().endswith(LIST_EXTENSIONS):
            listed = _read_image_list(item)
            if not listed:
                raise ValueError(f'image list {item!r} names no images')
            images += listed
        elif osp.isfile(item):
            images.append(item)
        else:
            raise FileNotFoundError(f'input not found: {item!r} (an image, a folder or a list)')
    return images


class ImagePipeline:
    """An image file (or array) → the ``[3, H, W]`` tensor the test pipeline makes of it.

    The config's ``LoadImageFromFile`` step (its ``color_type``, ``imdecode_backend`` and
    ``to_float32``; OpenCV colour, BGR, by default) is replaced by a decoder that names the file
    it cannot decode; a pipeline without one (in-memory datasets such as MultiDigits) is prefixed
    with that default. Arrays are taken as decoded images (``[H, W, 3]``, BGR like OpenCV).
    """

    def __init__(self, pipeline: Sequence[dict]) -> None:
        from mmengine.dataset import Compose
        from mmengine.registry import DefaultScope

        from mlkd.registry import register_all_modules

        load = dict(color_type='color', imdecode_backend='cv2', to_float32=False)
        steps = []
        for step in pipeline:
            kind = str(step.get('type', '')).split('.')[-1]
            if kind == 'LoadImageFromFile':
                load.update({k: step[k] for k in load if k in step})
            else:
                steps.append(dict(step))
        self.load = load
        register_all_modules(init_default_scope=False)
        with DefaultScope.overwrite_default_scope('mlkd'):
            self.transforms = Compose(steps)

    def decode(self, path: str) -> np.ndarray:
        import mmcv

        with open(path, 'rb') as f:
            data = f.read()
        try:
            image = mmcv.imfrombytes(
                data, flag=self.load['color_type'], backend=self.load['imdecode_backend']
            )
        except Exception as error:  # decoders raise their own types on garbage
            raise ImageDecodeError(
                f'{path!r} is not an image that can be decoded ({error})'
            ) from None
        if image is None:
            raise ImageDecodeError(
                f'{path!r} is not an image that can be decoded ({len(data)} bytes; '
                f'{self.load["imdecode_backend"]} read nothing)'
            )
        return image.astype(np.float32) if self.load['to_float32'] else image

    def __call__(self, image: str | np.ndarray) -> torch.Tensor:
        path = image if isinstance(image, str) else None
        array = self.decode(image) if path else np.asarray(image)
        results = dict(
            img=array, img_shape=array.shape[:2], ori_shape=array.shape[:2], img_path=path
        )
        try:
            packed = self.transforms(results)
        except Exception as error:
            raise ValueError(f'test pipeline failed on {path or "an array"}: {error}') from error
        if packed is None or 'inputs' not in packed:
            raise ValueError(
                'the test pipeline must end with PackInputs (it gave no "inputs" for '
                f'{path or "an array"})'
            )
        return packed['inputs']


def _shape_runs(tensors: Sequence[torch.Tensor]) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` of the runs of consecutive tensors of one shape (a batch is one shape:
    stacking would pad the smaller images and change their scores)."""
    start = 0
    for index in range(1, len(tensors) + 1):
        if index == len(tensors) or tensors[index].shape != tensors[start].shape:
            yield start, index
            start = index


class ImageLabeler:
    """Scores and labels images with a PyTorch classifier or an ONNX model.

    Build it with :meth:`from_checkpoint` or :meth:`from_onnx`; both run the same pipeline
    (:class:`ImagePipeline`).

    Args:
        score_batch: ``list of [3, H, W] tensors (one shape) -> float32 [B, C]`` scores.
        classes: class names, ``[C]``.
        pipeline: the test pipeline (list of transform dicts).
        description: what it runs, for messages.
        config_sha256: fingerprint of the config the model came from, when known.
    """

    def __init__(
        self,
        score_batch: Callable[[list[torch.Tensor]], np.ndarray],
        classes: Sequence[str],
        pipeline: Sequence[dict],
        description: str,
        config_sha256: str | None = None,
    ) -> None:
        self.score_batch = score_batch
        self.classes = [str(c) for c in classes]
        self.pipeline = ImagePipeline(pipeline)
        self.description = description
        self.config_sha256 = config_sha256

    @classmethod
    def from_checkpoint(
        cls,
        config: str | Config,
        checkpoint: str,
        cfg_options: dict | None = None,
        device: str | torch.device = 'cpu',
    ) -> ImageLabeler:
        """PyTorch: the network of ``config`` with ``checkpoint`` (:func:`init_classifier`)."""
        loaded = init_classifier(config, checkpoint, cfg_options, device)
        return cls(
            lambda inputs: torch_scores(loaded.network, inputs),
            loaded.classes,
            config_test_pipeline(loaded.cfg),
            f'PyTorch {loaded.role} of {loaded.config} ({loaded.checkpoint})',
            fingerprint(loaded.cfg),
        )

    @classmethod
    def from_onnx(
        cls,
        path: str,
        threads: int | None = None,
        pipeline: Sequence[dict] | None = None,
    ) -> ImageLabeler:
        """ONNX Runtime on ``path`` (:class:`mlkd.deployment.OnnxClassifier`); the pipeline is
        the one stored in the file unless ``pipeline`` is given."""
        from mlkd.deployment import OnnxClassifier

        model = OnnxClassifier(path, threads=threads)
        return cls(
            lambda inputs: model.scores(torch.stack(list(inputs)).numpy()),
            model.classes,
            model.test_pipeline if pipeline is None else pipeline,
            f'ONNX Runtime on {path}',
            model.config_sha256,
        )

    def scores(
        self,
        images: Sequence[str | np.ndarray],
        batch_size: int = 32,
        progress: bool = False,
    ) -> np.ndarray:
        """float32 ``[N, C]`` scores of ``images`` (paths or decoded arrays), in order."""
        return np.concatenate(
            list(self.iter_scores(images, batch_size, progress))
            or [np.zeros((0, len(self.classes)), np.float32)]
        )

    def iter_scores(
        self,
        images: Sequence[str | np.ndarray],
        batch_size: int = 32,
        progress: bool = False,
    ) -> Iterator[np.ndarray]:
        """The scores of ``images`` batch by batch (``[b, C]`` each); a progress bar on stderr
        when ``progress`` and there is more than one batch."""
        from mmengine.utils import ProgressBar

        if batch_size < 1:
            raise ValueError(f'batch_size must be >= 1, got {batch_size}')
        bar = (
            ProgressBar(len(images), file=sys.stderr)
            if progress and len(images) > batch_size
            else None
        )
        for start in range(0, len(images), batch_size):
            chunk = images[start : start + batch_size]
            tensors = [self.pipeline(image) for image in chunk]
            for begin, end in _shape_runs(tensors):
                yield np.asarray(self.score_batch(tensors[begin:end]), dtype=np.float32)
            if bar is not None:
                bar.update(len(chunk))
        if bar is not None:
            sys.stderr.write('\n')

    def label(
        self,
        images: Sequence[str],
        thresholds: float | np.ndarray = 0.5,
        batch_size: int = 32,
        progress: bool = False,
    ) -> Iterator[dict]:
        """For each image ``{'image', 'labels', 'scores'}``: the class names whose score is
        ``>= threshold`` (highest score first) and every class's score (``{name: score}``).

        Args:
            thresholds: one threshold, or one per class (``[C]``).
        """
        thresholds = np.broadcast_to(np.asarray(thresholds, dtype=np.float64), (len(self.classes),))
        position = 0
        for scores in self.iter_scores(images, batch_size, progress):
            for row in scores:
                order = np.argsort(-row, kind='stable')
                yield {
                    'image': images[position],
                    'labels': [self.classes[c] for c in order if row[c] >= thresholds[c]],
                    'scores': {name: float(s) for name, s in zip(self.classes, row)},
                }
                position += 1


def label_images(
    labeler: ImageLabeler,
    inputs: str | Sequence[str],
    thresholds: str | float | np.ndarray | None = None,
    batch_size: int = 32,
    progress: bool = True,
) -> list[dict]:
    """Label every image named by ``inputs`` (:func:`list_images`).

    Args:
        labeler: the model (:class:`ImageLabeler`).
        inputs: image files, folders, image lists.
        thresholds: a thresholds file (JSON of ``calibrate_thresholds.py``, checked against the
            model's label set), one threshold, or one per class; ``None``: 0.5.

    Returns:
        the :meth:`ImageLabeler.label` records, in input order.

    Raises:
        ThresholdsFileError: the thresholds file was made for another label set.
        ImageDecodeError: an input is not an image (named).
    """
    from mlkd.evaluation.thresholds import check_label_set, read_thresholds_file

    if isinstance(thresholds, (str, os.PathLike)):
        path, record = os.fspath(thresholds), read_thresholds_file(thresholds)
        check_label_set(record['classes'], labeler.classes, path, labeler.description)
        made_by, model_by = record.get('config_sha256'), labeler.config_sha256
        if made_by and model_by and made_by != model_by:
            warnings.warn(
                f'thresholds file {path!r} was calibrated with another config (fingerprint '
                f'{made_by[:12]}) than the model was made from ({model_by[:12]}); the label sets '
                'match, but check that the thresholds belong to this model',
                stacklevel=2,
            )
        thresholds = record['thresholds']
    images = list_images(inputs)
    threshold = 0.5 if thresholds is None else thresholds
    return list(labeler.label(images, threshold, batch_size, progress))


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------

#: Output formats of :func:`save_labels`, by file suffix.
LABEL_FORMATS = {'.jsonl': 'jsonl', '.csv': 'csv'}


def format_labels(record: dict, digits: int = 3) -> str:
    """One line for a terminal: ``path: 3 (0.981), 7 (0.874)`` (``-`` when no label)."""
    labels = ', '.join(f'{name} ({record["scores"][name]:.{digits}f})' for name in record['labels'])
    return f'{record["image"]}: {labels or "-"}'


def labels_text(records: Iterable[dict], classes: Sequence[str], fmt: str) -> str:
    """``records`` as JSON lines (one object per image) or CSV (``image``, ``labels`` joined by
    ``;``, then one score column per class)."""
    if fmt == 'jsonl':
        return ''.join(json.dumps(r, ensure_ascii=False) + '\n' for r in records)
    if fmt != 'csv':
        raise ValueError(f"format must be 'jsonl' or 'csv', got {fmt!r}")
    text = io.StringIO()
    writer = csv.writer(text, lineterminator='\n')
    writer.writerow(['image', 'labels', *classes])
    for r in records:
        writer.writerow(
            [r['image'], ';'.join(r['labels']), *(f'{r["scores"][c]:.6g}' for c in classes)]
        )
    return text.getvalue()


def check_labels_path(path: str, overwrite: bool = False, inputs: Sequence[str] = ()) -> str:
    """The format of an output path (:data:`LABEL_FORMATS`), checked under the output policy
    before any work (an existing file needs ``overwrite``; an input is never written).

    Raises:
        ValueError: for another suffix.
        OutputExistsError, OutputIsInputError: see :mod:`mlkd.utils.output_policy`.
    """
    from mlkd.utils.output_policy import check_output

    suffix = osp.splitext(path)[1].lower()
    if suffix not in LABEL_FORMATS:
        raise ValueError(
            f'output {path!r}: unknown format; use a {" or ".join(LABEL_FORMATS)} file name'
        )
    check_output(path, inputs=inputs, overwrite=overwrite)
    return LABEL_FORMATS[suffix]


def save_labels(
    records: Sequence[dict],
    path: str,
    classes: Sequence[str],
    overwrite: bool = False,
    inputs: Sequence[str] = (),
) -> None:
    """Write ``records`` to ``path`` (``.jsonl`` or ``.csv``; :func:`labels_text`) atomically."""
    from mlkd.utils.output_policy import write_text

    fmt = check_labels_path(path, overwrite, inputs)
    write_text(path, labels_text(records, classes, fmt), inputs=inputs, overwrite=overwrite)
