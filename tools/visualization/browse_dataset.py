"""A grid of samples as a config's data pipeline produces them, with their label names, as a PNG.

    python tools/visualization/browse_dataset.py configs/3d/3d_multidigits.py --out train.png
    python tools/visualization/browse_dataset.py CONFIG --phase val --num 8 --cols 4
    # two-view pipelines (mmpretrain MultiView, e.g. configs/_base_/datasets/coco2014_two_views.py)
    # show every view of a sample side by side
    python tools/visualization/browse_dataset.py \
        configs/3d/3d_coco_resnet101_to_resnet34_two_views.py

Images are shown as the pipeline leaves them, before the data preprocessor normalises them; when
the preprocessor converts BGR to RGB (``to_rgb=True``) the channels are flipped for display.
``--seed`` fixes the random augmentations.
"""

from __future__ import annotations

import argparse
import os.path as osp
import random

import numpy as np

from mlkd.utils.cli import add_cfg_options_argument, load_config, run_tool
from mlkd.utils.output_policy import add_overwrite_argument, check_output, save_figure


def to_image(tensor, bgr: bool) -> np.ndarray:
    """``[C, H, W]`` tensor from the pipeline -> ``[H, W, 3]`` float image in ``[0, 1]``."""
    image = tensor.detach().cpu().float().numpy()
    if image.shape[0] == 1:
        image = np.repeat(image, 3, axis=0)
    if bgr:
        image = image[::-1]
    image = image.transpose(1, 2, 0)
    if image.max() > 1.0:  # uint8 range
        image = image / 255.0
    return np.clip(image, 0.0, 1.0)


def label_names(data_sample, classes) -> str:
    label = data_sample.get('gt_label')
    if label is None:
        return '(no label)'
    indices = [int(i) for i in np.atleast_1d(np.asarray(label))]
    names = [
        str(classes[i]) if classes is not None and i < len(classes) else str(i) for i in indices
    ]
    return ', '.join(names) if names else '(no positive)'


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Show augmented samples of a config's pipeline")
    parser.add_argument('config', help='config file path (or mlkd::<path under configs/>)')
    parser.add_argument(
        '--phase',
        choices=['train', 'val', 'test'],
        default='train',
        help='whose dataloader to browse',
    )
    parser.add_argument('--num', type=int, default=12, help='number of samples')
    parser.add_argument('--start', type=int, default=0, help='index of the first sample')
    parser.add_argument('--cols', type=int, default=4, help='samples per row')
    parser.add_argument('--seed', type=int, default=0, help='seed of the random augmentations')
    parser.add_argument('--out', default='browse_dataset.png', help='PNG file to write')
    add_cfg_options_argument(parser, help='override config entries')
    add_overwrite_argument(parser)
    args = parser.parse_args(argv)
    if args.num < 1 or args.cols < 1:
        parser.error('--num and --cols must be positive')
    return args


def main(argv: list[str] | None = None) -> None:
    import torch
    from mmengine.registry import init_default_scope

    from mlkd.registry import DATASETS

    args = parse_args(argv)
    policy = dict(inputs=[args.config], overwrite=args.overwrite)
    check_output(args.out, **policy)
    cfg = load_config(args.config, args.cfg_options)
    init_default_scope(cfg.get('default_scope', 'mlkd'))
    loader_key = f'{args.phase}_dataloader'
    if not cfg.get(loader_key):
        raise ValueError(f'{args.config} has no {loader_key}')
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    dataset = DATASETS.build(cfg[loader_key].dataset)
    if args.start >= len(dataset):
        raise ValueError(
            f'--start {args.start}: the {args.phase} dataset has {len(dataset)} samples'
        )
    indices = range(args.start, min(len(dataset), args.start + args.num))
    classes = dataset.metainfo.get('classes')
    preprocessor = cfg.get('data_preprocessor') or cfg.get('model', {}).get('data_preprocessor')
    bgr = bool((preprocessor or {}).get('to_rgb', False))

    samples = []
    for index in indices:
        packed = dataset[index]
        views = packed['inputs']
        views = list(views) if isinstance(views, (list, tuple)) else [views]
        samples.append((index, views, label_names(packed['data_samples'], classes)))
    num_views = max(len(views) for _, views, _ in samples)

    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    cols = min(args.cols, len(samples))
    rows = -(-len(samples) // cols)
    fig, axes = plt.subplots(
        rows,
        cols * num_views,
        squeeze=False,
        layout='constrained',
        figsize=(2.4 * cols * num_views, 3.0 * rows + 0.4),
    )
    for ax in axes.flat:
        ax.axis('off')
    for position, (index, views, names) in enumerate(samples):
        row, col = divmod(position, cols)
        for v, view in enumerate(views):
            ax = axes[row, col * num_views + v]
            ax.imshow(to_image(view, bgr))
            shape = 'x'.join(map(str, view.shape[-2:]))
            heading = f'#{index}: {names}' if v == 0 else ''
            view_name = f'view {v}, ' if num_views > 1 else ''
            ax.set_title(f'{heading}\n{view_name}{shape}', fontsize='small')
    fig.suptitle(
        f'{osp.basename(args.config)}: {args.phase} pipeline'
        + (f', {num_views} views per sample' if num_views > 1 else '')
    )
    save_figure(fig, args.out, dpi=100, **policy)
    for index, views, names in samples:
        print(f'#{index}: {names} ({len(views)} view{"s" if len(views) > 1 else ""})')
    print(f'{len(samples)} samples of the {args.phase} pipeline written to {args.out}')


if __name__ == '__main__':
    run_tool(main)
