"""Overlay the SCL heatmaps stored in a checkpoint on their training images.

The figures are those of Figs. K.1-K.2 in the supplement of T. Verelst et al., "Spatial
Consistency Loss for Training Multi-Label Classifiers from Single-Label Annotations", WACV 2023.

For each chosen training image: the whole image as the test pipeline shows it, and, for the classes
the checkpoint's model scores highest, the image with that class's stored heatmap (full-image frame,
upsampled bilinearly) laid over it, titled with the class and its score. Writes

* ``heatmap_overlays.png`` — one row per image;
* ``heatmap_overlays.csv`` and ``.md`` — per image and class: score, whether the class is the
  annotated positive / a true positive (where the dataset has full labels), the heatmap's mean
  and maximum (in [0, 1]) and the fraction of its cells ever written.

    python tools/visualization/heatmap_overlays.py CONFIG CHECKPOINT --out-dir DIR
        [--indices 0 5 9 | --num-images 4] [--top-k 5] [--loss scl] [--cfg-options ...]

Pass the ``--cfg-options`` the run was trained with: the training set must be the same one.

CHECKPOINT is a training checkpoint of the run (``epoch_N.pth``): it is read like ``tools/test.py``
reads one, with mlkd's loader for self-produced local files (mmengine's Runner checkpoints hold
its message hub and schedulers, which ``weights_only=True`` cannot load) — use it only on your own
runs' files.
"""

from __future__ import annotations

import argparse
import csv
import os.path as osp

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from mmengine.registry import init_default_scope  # noqa: E402

import mlkd  # noqa: E402,F401
from mlkd.registry import DATASETS, MODELS  # noqa: E402
from mlkd.utils.checkpoint import load_local_checkpoint  # noqa: E402
from mlkd.utils.cli import add_cfg_options_argument, load_config  # noqa: E402
from mlkd.utils.output_policy import (
    add_overwrite_argument,
    check_outputs,  # noqa: E402
    open_output,
    save_figure,
)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config')
    parser.add_argument('checkpoint')
    parser.add_argument('--out-dir', required=True)
    parser.add_argument('--indices', type=int, nargs='+', help='training-set indices')
    parser.add_argument(
        '--num-images', type=int, default=4, help='without --indices: the first N training images'
    )
    parser.add_argument('--top-k', type=int, default=5, help='classes shown per image')
    parser.add_argument('--loss', help='name of the SCL loss in the config (if several)')
    add_cfg_options_argument(
        parser,
        help='the overrides the run was trained with (the training set must be '
        'the same for the heatmaps to belong to the images shown)',
    )
    add_overwrite_argument(parser)
    return parser.parse_args(argv)


def heatmap_state(state: dict, loss: str | None, checkpoint: str) -> dict[str, torch.Tensor]:
    """The SCL store (``heatmaps``, ``known``, maybe ``heatmap_classes``) from a state dict."""
    prefixes = sorted(k[: -len('heatmaps')] for k in state if k.endswith('.heatmaps'))
    if loss is not None:
        prefixes = [p for p in prefixes if p.rstrip('.').split('.')[-1] == loss]
    if len(prefixes) != 1:
        raise SystemExit(
            f'{checkpoint}: expected one SCL heatmap store '
            f'{"named " + repr(loss) + " " if loss else ""}in the state dict, found '
            f'{[p + "heatmaps" for p in prefixes]} (train with SpatialConsistencyLoss; '
            'choose one with --loss)'
        )
    prefix = prefixes[0]
    return {
        name: state[prefix + name]
        for name in ('heatmaps', 'known', 'heatmap_classes')
        if prefix + name in state
    }


def class_heatmap(store: dict, index: int, cls: int) -> np.ndarray:
    """``[H, W]`` heatmap of one image and class in [0, 1] (0 where top-k mode kept none)."""
    heatmaps = store['heatmaps'][index].float() / 255
    if 'heatmap_classes' in store:
        slots = (store['heatmap_classes'][index] == cls).nonzero().flatten()
        return heatmaps[slots[0]].numpy() if slots.numel() else np.zeros(heatmaps.shape[-2:])
    return heatmaps[cls].numpy()


def main(argv=None) -> None:
    args = parse_args(argv)
    outputs = [
        osp.join(args.out_dir, f'heatmap_overlays.{extension}')
        for extension in ('png', 'csv', 'md')
    ]
    policy = dict(inputs=[args.config, args.checkpoint], overwrite=args.overwrite)
    check_outputs(outputs, **policy)
    cfg = load_config(args.config, args.cfg_options)  # --cfg-options keys checked
    init_default_scope(cfg.get('default_scope', 'mlkd'))
    if not osp.isfile(args.checkpoint):
        raise SystemExit(f'checkpoint not found: {args.checkpoint}')
    checkpoint = load_local_checkpoint(args.checkpoint, map_location='cpu')
    state = checkpoint.get('state_dict', checkpoint)
    store = heatmap_state(state, args.loss, args.checkpoint)
    model_cfg = cfg.model.copy()
    if cfg.get('data_preprocessor') is not None:  # as the Runner does
        model_cfg.setdefault('data_preprocessor', cfg.data_preprocessor)
    model = MODELS.build(model_cfg)
    model.load_state_dict(state)
    model.eval()

    dataset_cfg = cfg.train_dataloader.dataset.copy()
    dataset_cfg.pipeline = cfg.test_dataloader.dataset.pipeline  # the whole image
    dataset = DATASETS.build(dataset_cfg)
    if len(dataset) != store['heatmaps'].shape[0]:
        print(
            f'note: {len(dataset)} training images, heatmap store for '
            f'{store["heatmaps"].shape[0]} (num_samples of the loss)'
        )
    indices = args.indices or list(range(min(args.num_images, len(dataset))))
    bad = [i for i in indices if not 0 <= i < min(len(dataset), store['heatmaps'].shape[0])]
    if bad:
        raise SystemExit(f'--indices {bad} outside the training set / heatmap store')
    classes = dataset.metainfo.get('classes') or [str(c) for c in range(model.num_classes)]
    top_k = min(args.top_k, len(classes))

    figure, axes = plt.subplots(
        len(indices), top_k + 1, squeeze=False, figsize=(2.2 * (top_k + 1), 2.4 * len(indices))
    )
    rows = []
    for row, index in enumerate(indices):
        data = model.data_preprocessor({k: [v] for k, v in dataset[index].items()}, training=False)
        with torch.no_grad():
            scores = torch.sigmoid(model(data['inputs'], mode='tensor'))[0]
        image = dataset[index]['inputs'].permute(1, 2, 0).numpy()
        image = (image - image.min()) / max(float(image.max() - image.min()), 1e-6)
        sample = data['data_samples'][0]
        observed = set(np.asarray(sample.gt_label).tolist())
        full = dataset.get_data_info(index).get('gt_label_full')
        true = set(np.asarray(full).tolist()) if full is not None else None
        axes[row, 0].imshow(image)
        truth = '' if true is None else f'\ntrue {sorted(true)}'
        axes[row, 0].set_title(f'#{index}  annotated {sorted(observed)}{truth}', fontsize=8)
        known = store['known'][index].float().mean().item()
        for rank, cls in enumerate(scores.argsort(descending=True)[:top_k].tolist()):
            heat = class_heatmap(store, index, cls)
            upsampled = F.interpolate(
                torch.as_tensor(heat)[None, None].float(),
                size=image.shape[:2],
                mode='bilinear',
                align_corners=False,
            )[0, 0].numpy()
            ax = axes[row, rank + 1]
            ax.imshow(image)
            ax.imshow(upsampled, cmap='jet', alpha=0.5, vmin=0, vmax=1)
            ax.set_title(f'{classes[cls]}: {scores[cls]:.2f}', fontsize=8)
            rows.append(
                dict(
                    sample_idx=index,
                    rank=rank + 1,
                    cls=classes[cls],
                    score=round(float(scores[cls]), 4),
                    observed=cls in observed,
                    true='' if true is None else cls in true,
                    heatmap_mean=round(float(heat.mean()), 4),
                    heatmap_max=round(float(heat.max()), 4),
                    known_cells=round(known, 4),
                )
            )
    for ax in axes.flat:
        ax.axis('off')
    figure.suptitle(f'SCL heatmaps, {osp.basename(args.checkpoint)}', fontsize=9)
    png, table_csv, table_md = outputs
    save_figure(figure, png, dpi=100, tight_layout=True, **policy)
    with open_output(table_csv, newline='', **policy) as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with open_output(table_md, **policy) as f:
        f.write('| ' + ' | '.join(rows[0]) + ' |\n|' + '---|' * len(rows[0]) + '\n')
        for r in rows:
            f.write('| ' + ' | '.join(str(v) for v in r.values()) + ' |\n')
    print(f'wrote {png} and its table ({len(rows)} rows)')


if __name__ == '__main__':
    main()
