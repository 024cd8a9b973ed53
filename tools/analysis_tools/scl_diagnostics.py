"""Measure what a single-positive run with SCL does, from its training checkpoints (MultiDigits).

Verelst et al., "Spatial Consistency Loss for Training Multi-Label Classifiers from Single-Label
Annotations", WACV 2023; mlkd's SCL: ``docs/methods.md`` §3.3. For each checkpoint it reports

* **the heatmap store** (runs with ``SpatialConsistencyLoss``), over every training image, using
  the mosaic's ground truth (which cell holds which digit): the mean stored value of a present
  class in the cells of its digit (``store_in_cell``), of a present class in the image's other
  cells (``store_elsewhere``), of the classes absent from the image (``store_absent``), the mean
  spatial standard deviation of a class's map (``store_spatial_std``) and the fraction of cells
  ever written (``known``);
* **the class maps** (any ``ClassifierWithLosses`` run), the same statistics on the whole training
  images as the test pipeline shows them (``map_in_cell``, ``map_elsewhere``, ``map_absent``,
  ``map_spatial_std``: per-position probabilities ``σ(class map)``) and the image-level scores of
  present and absent classes (``score_present``, ``score_absent``);
* **the loss terms** on ``--num-batches`` training batches drawn with the training pipeline (crops
  and flips, fixed seeds) against the checkpoint's state: each weighted ``loss_*`` value, the norm
  of its gradient on the head's ``fc`` and on the last parameterised backbone layer, and the
  cosine between the gradients of the first two terms (in the config's order; the head's own
  loss is left out when ``task_loss_weight`` is 0). With ``--refresh-store`` the store is first
  overwritten with the checkpoint network's own maps of the whole images (momentum 0), so the
  SCL term compares the crops with the network's current view instead of its running average.

    python tools/analysis_tools/scl_diagnostics.py CONFIG CKPT [CKPT ...] [--out FILE.md]
        [--num-batches 4] [--batch-size 64] [--refresh-store] [--cfg-options ...]

Pass the ``--cfg-options`` the run was trained with (the training set must be the same). The
checkpoints are the run's own ``epoch_N.pth`` files, read as ``tools/test.py`` reads them.
"""

from __future__ import annotations

import argparse
import copy
import os.path as osp

import numpy as np
import torch
from mmengine.dataset import pseudo_collate
from mmengine.registry import init_default_scope

import mlkd  # noqa: F401
from mlkd.engine.hooks.loss_diagnostics import last_parameterised_layer
from mlkd.registry import DATASETS, MODELS
from mlkd.utils.checkpoint import load_local_checkpoint
from mlkd.utils.cli import add_cfg_options_argument, add_checkpoint_table_arguments, load_config
from mlkd.utils.output_policy import check_output, write_text


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    add_checkpoint_table_arguments(parser)
    parser.add_argument('--num-batches', type=int, default=4)
    parser.add_argument('--batch-size', type=int, default=64)
    parser.add_argument(
        '--num-images', type=int, default=500, help='training images for the class-map statistics'
    )
    parser.add_argument(
        '--refresh-store',
        action='store_true',
        help='before the loss terms, overwrite the heatmap store with the '
        "checkpoint network's own class maps of the whole training images "
        '(a target with no lag: isolates what the running average adds)',
    )
    add_cfg_options_argument(parser)
    return parser.parse_args(argv)


def cell_masks(cell_labels: np.ndarray, num_classes: int, size: int) -> torch.Tensor:
    """``[N, C, size, size]`` bool: where each class's digits lie, on a ``size`` grid.

    ``cell_labels`` is ``[N, g·g]`` (row-major cells, -1 empty); each cell covers a
    ``size/g × size/g`` block (``size`` a multiple of ``g``)."""
    n, cells = cell_labels.shape
    grid = int(round(cells**0.5))
    if grid * grid != cells or size % grid:
        raise ValueError(f'cell grid {cells} does not tile a {size} x {size} map')
    labels = torch.as_tensor(cell_labels).view(n, grid, grid)
    onehot = torch.zeros(n, num_classes, grid, grid, dtype=torch.bool)
    filled = labels >= 0
    idx = labels.clamp(min=0)
    onehot.scatter_(1, idx[:, None], filled[:, None])
    block = size // grid
    return onehot.repeat_interleave(block, 2).repeat_interleave(block, 3)


def localisation_stats(maps: torch.Tensor, where: torch.Tensor, prefix: str) -> dict[str, float]:
    """Mean of ``maps [N, C, s, s]`` (in [0, 1]) in a present class's cells, in the other cells of
    images that contain it, and over absent classes; mean spatial std of the maps."""
    present = where.flatten(2).any(2)  # [N, C]
    elsewhere = ~where & present[:, :, None, None]
    absent = ~present[:, :, None, None].expand_as(where)

    def mean(mask):
        return float(maps[mask].mean()) if mask.any() else float('nan')

    return {
        f'{prefix}_in_cell': mean(where),
        f'{prefix}_elsewhere': mean(elsewhere),
        f'{prefix}_absent': mean(absent),
        f'{prefix}_spatial_std': float(maps.flatten(2).std(2).mean()),
    }


def store_of(model) -> dict[str, torch.Tensor] | None:
    for module in model.modules():
        if type(module).__name__ == 'SpatialConsistencyLoss':
            return dict(heatmaps=module.heatmaps, known=module.known)
    return None


def loss_gradients(model, batches, params: dict[str, list]) -> dict[str, float]:
    """Mean over batches of each loss term's value and gradient norms; cosine of terms 1 and 2."""
    sums: dict[str, float] = {}
    for data in batches:
        losses = model(**model.data_preprocessor(data, True), mode='loss')
        # The head's own loss is switched off in these configs (task_loss_weight=0): skip it.
        skip = {'loss_cls'} if getattr(model, 'task_loss_weight', 1) == 0 else set()
        terms = {
            k: v
            for k, v in losses.items()
            if k.startswith('loss') and k not in skip and v.requires_grad
        }
        grads = {}
        for key, value in terms.items():
            sums[f'{key}'] = sums.get(key, 0.0) + float(value.detach())
            for where, group in params.items():
                grad = torch.autograd.grad(value, group, retain_graph=True, allow_unused=True)
                flat = torch.cat(
                    [
                        (g if g is not None else torch.zeros_like(p)).flatten()
                        for g, p in zip(grad, group)
                    ]
                )
                grads[(key, where)] = flat
                name = f'{key} grad_norm {where}'
                sums[name] = sums.get(name, 0.0) + float(flat.norm())
        keys = list(terms)
        if len(keys) >= 2:
            for where in params:
                a, b = grads[(keys[0], where)], grads[(keys[1], where)]
                cos = float(torch.nn.functional.cosine_similarity(a, b, dim=0))
                name = f'cos {keys[0]} {keys[1]} {where}'
                sums[name] = sums.get(name, 0.0) + cos
    return {k: v / len(batches) for k, v in sums.items()}


def refresh_store(model, whole_set, store: dict[str, torch.Tensor]) -> None:
    """Write the network's class maps of every whole training image into the store (no EMA)."""
    from mlkd.models.losses.single_positive.spatial_consistency import write_heatmaps

    count = min(len(whole_set), store['heatmaps'].shape[0])
    with torch.no_grad():
        for start in range(0, count, 100):
            rows = torch.arange(start, min(start + 100, count))
            items = [whole_set[i] for i in rows.tolist()]
            data = model.data_preprocessor(pseudo_collate(items), False)
            probs = torch.sigmoid(model.class_maps(model.classifier.backbone(data['inputs'])))
            box = torch.tensor([[0.0, 0.0, 1.0, 1.0]]).expand(len(rows), 4)
            flip = torch.zeros(len(rows), dtype=torch.bool)
            heat, known = write_heatmaps(
                store['heatmaps'][rows], store['known'][rows], probs, box, flip, momentum=0.0
            )
            store['heatmaps'][rows], store['known'][rows] = heat, known


def diagnose(cfg, checkpoint: str, args, train_set, whole_set, cell_labels: np.ndarray) -> dict:
    state = load_local_checkpoint(checkpoint, map_location='cpu')
    state = state.get('state_dict', state)
    model_cfg = copy.deepcopy(cfg.model)
    if cfg.get('data_preprocessor') is not None:
        model_cfg.setdefault('data_preprocessor', cfg.data_preprocessor)
    model = MODELS.build(model_cfg)
    model.load_state_dict(state)
    row: dict[str, float] = {}
    store = store_of(model)
    if store is not None:
        heat = store['heatmaps'].float() / 255
        count = min(len(heat), len(cell_labels))
        masks = cell_masks(cell_labels[:count], heat.shape[1], heat.shape[-1])
        row.update(localisation_stats(heat[:count], masks, 'store'))
        row['known'] = float(store['known'].float().mean())
    # Class maps and scores on the whole training images (eval mode).
    model.eval()
    maps, scores = [], []
    with torch.no_grad():
        for start in range(0, args.num_images, 100):
            items = [whole_set[i] for i in range(start, min(start + 100, args.num_images))]
            data = model.data_preprocessor(pseudo_collate(items), False)
            feats = model.classifier.backbone(data['inputs'])
            maps.append(torch.sigmoid(model.class_maps(feats)))
            # the network's own pooling (mean, max...) of its maps, through its neck if any
            neck = model.classifier.neck if model.classifier.with_neck else None
            scores.append(torch.sigmoid(model.classifier.head(neck(feats) if neck else feats)))
    maps, scores = torch.cat(maps), torch.cat(scores)
    where = cell_masks(cell_labels[: len(maps)], maps.shape[1], maps.shape[-1])
    row.update(localisation_stats(maps, where, 'map'))
    present = where.flatten(2).any(2)
    row['score_present'] = float(scores[present].mean())
    row['score_absent'] = float(scores[~present].mean())
    if args.refresh_store and store is not None:
        refresh_store(model, whole_set, store)
    # Loss terms on training batches (train mode: BatchNorm on batch statistics, as in training).
    model.train()
    head = model._class_map_layer() or model.classifier.head.fc  # the maps' linear layer
    backbone = model.classifier.backbone
    layer = backbone.get_submodule(last_parameterised_layer(backbone))
    params = {'head': list(head.parameters()), 'backbone': list(layer.parameters())}
    batches = []
    for b in range(args.num_batches):
        np.random.seed(1000 + b)
        start = b * args.batch_size
        batches.append(
            pseudo_collate(
                [train_set[i % len(train_set)] for i in range(start, start + args.batch_size)]
            )
        )
    row.update(loss_gradients(model, batches, params))
    return row


def main(argv=None) -> None:
    args = parse_args(argv)
    policy = dict(inputs=[args.config, *args.checkpoints], overwrite=args.overwrite)
    if args.out:
        check_output(args.out, **policy)
    cfg = load_config(args.config, args.cfg_options)
    init_default_scope(cfg.get('default_scope', 'mlkd'))
    for path in args.checkpoints:
        if not osp.isfile(path):
            raise SystemExit(f'checkpoint not found: {path}')
    train_set = DATASETS.build(cfg.train_dataloader.dataset)
    whole_cfg = cfg.train_dataloader.dataset.copy()
    whole_cfg.pipeline = cfg.test_dataloader.dataset.pipeline
    whole_set = DATASETS.build(whole_cfg)
    if not hasattr(whole_set, 'get_data_info') or 'cell_labels' not in whole_set.get_data_info(0):
        raise SystemExit('scl_diagnostics needs a dataset with per-cell labels (MultiDigits)')
    cell_labels = np.array(
        [whole_set.get_data_info(i)['cell_labels'] for i in range(len(whole_set))]
    )
    args.num_images = min(args.num_images, len(whole_set))
    rows = {
        osp.basename(p): diagnose(cfg, p, args, train_set, whole_set, cell_labels)
        for p in args.checkpoints
    }
    keys = list(dict.fromkeys(k for r in rows.values() for k in r))
    lines = ['| measure | ' + ' | '.join(rows) + ' |', '|---|' + '---:|' * len(rows)]
    for key in keys:
        lines.append(
            f'| {key} | '
            + ' | '.join(f'{r[key]:.4g}' if key in r else '—' for r in rows.values())
            + ' |'
        )
    table = '\n'.join(lines)
    print(table)
    if args.out:
        write_text(args.out, table + '\n', **policy)


if __name__ == '__main__':
    main()
