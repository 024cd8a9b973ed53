"""Helpers shared by several test modules (independent reference computations)."""

from __future__ import annotations

import functools
import math

import torch


def loop_class_distance_statistics(
    embeddings: torch.Tensor, labels: torch.Tensor
) -> dict[str, float]:
    """The definitions of :mod:`mlkd.evaluation.class_distances` written out as loops over
    samples: per anchor, the mean over its partners (other samples of its class, or samples of
    other classes); then the mean over the anchors that have partners."""
    unit = [e / math.sqrt(sum(float(v) ** 2 for v in e)) for e in embeddings.double()]
    labels = [int(v) for v in labels]
    per_anchor = {'intra_distance': [], 'inter_distance': [], 'd_intra': [], 'd_inter': []}
    for i, anchor in enumerate(unit):
        same = [j for j in range(len(unit)) if j != i and labels[j] == labels[i]]
        other = [j for j in range(len(unit)) if labels[j] != labels[i]]
        for partners, distance_key, d_key in (
            (same, 'intra_distance', 'd_intra'),
            (other, 'inter_distance', 'd_inter'),
        ):
            if not partners:
                continue
            dots = [float((anchor * unit[j]).sum()) for j in partners]
            distances = [float((anchor - unit[j]).norm()) for j in partners]
            per_anchor[distance_key].append(sum(distances) / len(partners))
            per_anchor[d_key].append(sum(math.exp(d) for d in dots) / len(partners))
    out = {k: (sum(v) / len(v) if v else math.nan) for k, v in per_anchor.items()}
    out['intra_anchors'] = len(per_anchor['d_intra'])
    out['inter_anchors'] = len(per_anchor['d_inter'])
    return out


def markdown_rows(text: str, start: str) -> dict[str, list[str]]:
    """First cell -> other cells of the first Markdown table after ``start``."""
    lines = text[text.index(start) :].split('\n')
    first = next(i for i, line in enumerate(lines) if line.startswith('|'))
    rows = {}
    for line in lines[first + 2 :]:
        if not line.startswith('|'):
            break
        cells = [cell.strip().strip('*') for cell in line.strip('|').split('|')]
        rows.setdefault(cells[0], cells[1:])
    return rows


def intra_class_paper_tables() -> dict[str, dict[str, list[str]]]:
    """Tables 1, 2 and 3 (mlkd's interpretation of its layout) of the intra-class contrastive
    paper as docs/paper-tables.md §3 transcribes them: ``{'1': {row name: cells}, ...}``."""
    import os.path as osp

    repo = osp.dirname(osp.dirname(osp.abspath(__file__)))
    with open(osp.join(repo, 'docs', 'paper-tables.md'), encoding='utf-8') as file:
        text = file.read()
    text = text[text.index('## 3. Intra-class contrastive teacher') :]
    return {
        '1': markdown_rows(text, '### Table 1'),
        '2': markdown_rows(text, '### Table 2'),
        '3': markdown_rows(text, 'Interpretation used by mlkd'),
    }


def metafile_cell_configs(paper: str, dataset: str | None = None) -> set[str]:
    """Configs (paths under ``configs/``) that ``configs/*/metafile.yml`` names for a cell of
    ``paper``'s tables (its ``Paper`` key; on ``dataset`` only, when given): the model index that
    ``docs/reproduction.md`` is rendered from, each cell checked against docs/paper-tables.md by
    ``tests/tools/test_render_reproduction.py``."""
    import glob
    import os.path as osp

    import yaml

    repo = osp.dirname(osp.dirname(osp.abspath(__file__)))
    configs = set()
    for path in glob.glob(osp.join(repo, 'configs', '*', 'metafile.yml')):
        with open(path, encoding='utf-8') as file:
            models = yaml.safe_load(file).get('Models') or []
        for model in models:
            if model['Config'] and any(
                cell['Paper'] == paper and dataset in (None, cell['Dataset'])
                for cell in model.get('Results') or []
            ):
                configs.add(model['Config'].removeprefix('configs/'))
    return configs


#: Class names the deployment tests export with.
DIGIT_CLASSES = [f'digit {i}' for i in range(10)]


@functools.lru_cache(maxsize=4)
def digits_classifier(config: str):
    """A ``configs/multidigits/<config>`` classifier (random weights, eval mode) with a data
    preprocessor whose channels differ (mean, std and the BGR->RGB flip all matter). Built once
    per test process: callers must not change it."""
    import os.path as osp

    from mmengine.config import Config
    from mmengine.registry import DefaultScope

    from mlkd.registry import MODELS, register_all_modules

    register_all_modules(init_default_scope=False)
    path = osp.join(
        osp.dirname(osp.dirname(osp.abspath(__file__))), 'configs', 'multidigits', config
    )
    with DefaultScope.overwrite_default_scope('mlkd'):
        torch.manual_seed(0)
        net = MODELS.build(Config.fromfile(path).model)
        net.data_preprocessor = MODELS.build(
            dict(
                type='MultiLabelDataPreprocessor',
                num_classes=10,
                mean=[10.0, 120.0, 200.0],
                std=[50.0, 60.0, 70.0],
                to_rgb=True,
            )
        )
    return net.eval()


@functools.lru_cache(maxsize=8)
def export_score_model(network, fold: bool) -> bytes:
    """``network`` as an mlkd ONNX model (32 x 32 inputs, :data:`DIGIT_CLASSES`), its
    normalisation folded into the graph or left outside (exported once per test process)."""
    from mlkd.deployment import Preprocessing, ScoreModel, export_onnx_bytes
    from mlkd.deployment.onnx_export import FORMAT_VERSION, score_activation

    preprocessing = Preprocessing.from_preprocessor(network.data_preprocessor)
    metadata = {
        'mlkd.format': FORMAT_VERSION,
        'mlkd.classes': DIGIT_CLASSES,
        'mlkd.activation': score_activation(network),
        'mlkd.normalization': 'folded' if fold else 'external',
        'mlkd.mean': preprocessing.mean,
        'mlkd.std': preprocessing.std,
        'mlkd.to_rgb': preprocessing.to_rgb,
        'mlkd.input_shape': [3, 32, 32],
        'mlkd.test_pipeline': [dict(type='PackInputs')],
    }
    model = ScoreModel(network, preprocessing if fold else None, score_activation(network))
    return export_onnx_bytes(model, (3, 32, 32), metadata)


def random_images(count: int) -> list[torch.Tensor]:
    """``count`` random ``[3, 32, 32]`` pixel tensors (0..255), the same for every call."""
    return [
        torch.randint(0, 256, (3, 32, 32), generator=torch.Generator().manual_seed(i))
        for i in range(count)
    ]
