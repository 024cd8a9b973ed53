"""What the analysis tools that run a trained classifier share: the classifier of a config with
its weights, a split's data through the test pipeline and the classifier's outputs on it (their
output files go through :mod:`mlkd.utils.output_policy`).

Used by the analysis tools that evaluate a trained network (``tools/analysis_tools``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

import torch
from mmengine.utils import ProgressBar
from torch import nn

from mlkd.apis.inference import build_classifier, config_test_pipeline
from mlkd.engine import MLKDRunner
from mlkd.models.weights import load_network_checkpoint


def load_classifier(cfg, checkpoint: str, role: str, device: torch.device) -> nn.Module:
    """The network ``cfg`` deploys (:func:`mlkd.apis.inference.build_classifier`: the student of
    a distillation config, the classifier of a ``ClassifierWithLosses``, else the model, with the
    config's data preprocessor) with the weights of ``checkpoint`` (a file or a work dir; loaded
    strictly, errors naming ``role``), in eval mode on ``device``."""
    network, _, _ = build_classifier(cfg)
    load_network_checkpoint(network, checkpoint, role)
    return network.to(device).eval()


def build_loader(cfg, split: str, batch_size: int | None, num_workers: int | None):
    """The ``split`` (``'train'`` or ``'test'``) data through the test pipeline, in order: the
    training images without augmentation for ``'train'``."""
    loader_cfg = cfg.test_dataloader.copy()
    if split == 'train':
        dataset = copy.deepcopy(cfg.train_dataloader.dataset)
        inner = dataset  # the dataset that holds the pipeline, inside any wrappers (LabelSubset)
        while 'pipeline' not in inner and isinstance(inner.get('dataset'), Mapping):
            inner = inner['dataset']
        inner['pipeline'] = config_test_pipeline(cfg)
        loader_cfg.dataset = dataset
    loader_cfg.sampler = dict(type='DefaultSampler', shuffle=False)
    if batch_size is not None:
        loader_cfg.batch_size = batch_size
    if num_workers is not None:
        loader_cfg.num_workers = num_workers
        loader_cfg.persistent_workers = num_workers > 0
    return MLKDRunner.build_dataloader(loader_cfg)


@torch.no_grad()
def collect_logits_and_targets(
    model: nn.Module, loader, max_samples: int | None, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """``logits [N, C]`` of ``model`` and the data preprocessor's targets ``[N, C]`` (1 / 0 / -1,
    each sample's ``gt_score``) on ``loader``, the first ``max_samples`` only if given; shows a
    progress bar."""
    from mlkd.models.utils import batch_targets

    total = len(loader.dataset) if max_samples is None else min(max_samples, len(loader.dataset))
    progress = ProgressBar(total)
    logits, targets, seen = [], [], 0
    for batch in loader:
        data = model.data_preprocessor(batch, training=False)
        out = model(data['inputs'].to(device), mode='tensor')
        logits.append(out.float().cpu())
        targets.append(batch_targets(data['data_samples'], out.shape[1]).cpu())
        progress.update(min(len(out), total - seen))
        seen += len(out)
        if max_samples is not None and seen >= max_samples:
            break
    print()
    logits, targets = torch.cat(logits), torch.cat(targets)
    return logits[:total], targets[:total]
