"""Linear-probe transfer evaluation of a frozen backbone (the Two-way paper's transfer study).

T. Kobayashi, "Two-way Multi-Label Loss", CVPR 2023, Sec. 4.4 / Table 8 and supplement §B /
Table A: a network trained with each loss is frozen; a linear classifier on its features is fit on
a downstream dataset with L-BFGS and an L2 weight chosen among 45 log-spaced values in
[1e-6, 1e5]. Math and the choice of the weight: :mod:`mlkd.evaluation.linear_probe`.

    python tools/analysis_tools/linear_probe.py CONFIG CHECKPOINT --dataset cifar100 \
        --data-root data/cifar100 --out-dir work_dirs/transfer/bce \
        [--selection val|test] [--val-fraction 0.2] [--seed 0] [--image-size 224] \
        [--resize-size 256] [--max-iter 1000] [--max-samples N] [--batch-size 64] \
        [--num-workers 4] [--device cuda] [--save-features] [--overwrite] [--cfg-options ...]

* CONFIG / CHECKPOINT: the network's config (its ``model``; a ``ClassifierWithLosses`` gives its
  classifier) and a checkpoint file or work dir (strict load; a distiller checkpoint gives its
  student). Features: the backbone's last output, global-average-pooled (ResNet-50: the 2048-d
  penultimate feature), in fp32, computed once with the network in eval mode under ``no_grad``.
* ``--dataset``: a torchvision dataset already on disk under ``--data-root`` (never downloaded:
  a missing one is an error naming the folder): ``cifar10``, ``cifar100`` (train / test),
  ``flowers102``, ``dtd`` (partition 1) (train + val / test), ``fgvc_aircraft``,
  ``oxford_iiit_pet`` (trainval / test), ``stanford_cars``, ``food101`` (train / test) — the
  train / test sizes of the supplement's Table A —, or ``imagefolder``: ``DATA_ROOT/train/<class>/``
  and ``DATA_ROOT/test/<class>/`` image folders (the same class folders in both).
* Images: RGB, resized (shorter side ``--resize-size``, default ``image_size · 256 / 224``) and
  centre-cropped to ``--image-size``, then normalised as the config's data preprocessor does.
* ``--selection val`` (default): the L2 weight is chosen on a validation split of
  ``--val-fraction`` of the training set, drawn per class with ``--seed`` (fit on the rest); the
  probe is refit at that weight on the whole training set and evaluated on the test set.
  ``--selection test``: the supplement's reading, the best test accuracy over the 45 weights
  (optimistic: the test set chooses).

Writes, in ``--out-dir`` (existing files refused unless ``--overwrite``):
``linear_probe_<dataset>.md`` (the result and the accuracy at every weight), ``.csv`` (one row per
weight) and ``.png`` (accuracy against the weight, the chosen one marked); with
``--save-features`` also ``linear_probe_<dataset>.features.npz`` (``train_features``,
``train_labels``, ``test_features``, ``test_labels``).
"""

from __future__ import annotations

import argparse
import os.path as osp

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt
import numpy as np
import torch
from mmengine.registry import init_default_scope
from mmengine.utils import ProgressBar

import mlkd  # noqa: F401  (installs the compat shims before anything else from mlkd)
from mlkd.apis.classifier_outputs import load_classifier
from mlkd.evaluation.linear_probe import select_and_evaluate
from mlkd.utils.cli import add_cfg_options_argument, add_device_argument, load_config
from mlkd.utils.output_policy import (
    add_overwrite_argument,
    open_output,
    output_paths,
    save_figure,
)
from mlkd.utils.tables import render_table, write_csv

#: --dataset -> (torchvision class, keyword arguments of each training part, of the test part)
DATASETS = {
    'cifar10': ('CIFAR10', [dict(train=True)], dict(train=False)),
    'cifar100': ('CIFAR100', [dict(train=True)], dict(train=False)),
    'flowers102': ('Flowers102', [dict(split='train'), dict(split='val')], dict(split='test')),
    'dtd': ('DTD', [dict(split='train'), dict(split='val')], dict(split='test')),
    'fgvc_aircraft': ('FGVCAircraft', [dict(split='trainval')], dict(split='test')),
    'oxford_iiit_pet': ('OxfordIIITPet', [dict(split='trainval')], dict(split='test')),
    'stanford_cars': ('StanfordCars', [dict(split='train')], dict(split='test')),
    'food101': ('Food101', [dict(split='train')], dict(split='test')),
    'imagefolder': ('ImageFolder', [dict(split='train')], dict(split='test')),
}


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config', help="the network's config (its model)")
    parser.add_argument('checkpoint', help='checkpoint file or work dir (its last checkpoint)')
    parser.add_argument('--dataset', required=True, choices=sorted(DATASETS))
    parser.add_argument(
        '--data-root',
        required=True,
        help='the folder the torchvision dataset was downloaded to (it is never downloaded here)',
    )
    parser.add_argument('--out-dir', required=True)
    parser.add_argument(
        '--selection',
        choices=('val', 'test'),
        default='val',
        help='val (default): the L2 weight chosen on a validation split held out '
        'from the training set; test: the best test accuracy over the '
        "weights (the supplement's reading)",
    )
    parser.add_argument(
        '--val-fraction',
        type=float,
        default=0.2,
        help='share of each class of the training set held out for validation',
    )
    parser.add_argument('--seed', type=int, default=0, help='seed of the validation draw')
    parser.add_argument('--image-size', type=int, default=224)
    parser.add_argument(
        '--resize-size',
        type=int,
        help='shorter side before the centre crop (default image_size·256/224)',
    )
    parser.add_argument('--max-iter', type=int, default=1000, help='L-BFGS iterations per fit')
    parser.add_argument(
        '--max-samples', type=int, help='only the first N images of each split (a quick check)'
    )
    parser.add_argument('--batch-size', type=int, default=64)
    parser.add_argument('--num-workers', type=int, default=4)
    add_device_argument(parser, help=None, choices=None)
    parser.add_argument(
        '--save-features', action='store_true', help='also write the features and labels (.npz)'
    )
    add_overwrite_argument(parser)
    add_cfg_options_argument(parser)
    return parser.parse_args(argv)


def build_datasets(
    name: str, root: str, transform
) -> tuple[torch.utils.data.Dataset, torch.utils.data.Dataset]:
    """The training set (its parts concatenated) and the test set of ``--dataset name``.

    Raises:
        SystemExit: naming the dataset and the folder when it is not on disk.
    """
    import torchvision.datasets as tv_datasets

    class_name, train_parts, test_part = DATASETS[name]
    if not osp.isdir(root):
        raise SystemExit(f'--dataset {name}: --data-root {root!r} is not a folder')

    def build(kwargs: dict):
        if name == 'imagefolder':
            folder = osp.join(root, kwargs['split'])
            if not osp.isdir(folder):
                raise SystemExit(
                    f'--dataset imagefolder: {folder!r} not found (expected '
                    f'{root}/train/<class>/* and {root}/test/<class>/*)'
                )
            return tv_datasets.ImageFolder(folder, transform=transform)
        try:
            return getattr(tv_datasets, class_name)(
                root, transform=transform, download=False, **kwargs
            )
        except (RuntimeError, FileNotFoundError) as error:
            raise SystemExit(
                f'--dataset {name}: torchvision {class_name}({kwargs}) found no data '
                f'under --data-root {root!r} ({error}); download it there first '
                f'(torchvision.datasets.{class_name}(root, download=True)); this '
                'tool never downloads'
            ) from error

    train = [build(kwargs) for kwargs in train_parts]
    test = build(test_part)
    if name == 'imagefolder' and train[0].classes != test.classes:
        raise SystemExit(
            f'--dataset imagefolder: the class folders of {root}/train '
            f'({train[0].classes}) and {root}/test ({test.classes}) differ'
        )
    return (train[0] if len(train) == 1 else torch.utils.data.ConcatDataset(train)), test


def _to_rgb(image):
    return image.convert('RGB')


def _to_float(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.float()


def image_transform(image_size: int, resize_size: int):
    """PIL image -> ``[3, H, W]`` float RGB in [0, 255], resized and centre-cropped."""
    from torchvision import transforms

    return transforms.Compose(
        [
            transforms.Lambda(_to_rgb),
            transforms.Resize(resize_size),
            transforms.CenterCrop(image_size),
            transforms.PILToTensor(),
            transforms.Lambda(_to_float),
        ]
    )


def normalise(model, images: torch.Tensor) -> torch.Tensor:
    """RGB ``[B, 3, H, W]`` in [0, 255] as the model's data preprocessor gives it to the model:
    BGR unless it converts to RGB, then (x − mean) / std if it normalises."""
    preprocessor = model.data_preprocessor
    if not getattr(preprocessor, 'to_rgb', False):
        images = images.flip(1)  # the network was trained on mmcv's BGR images
    if getattr(preprocessor, '_enable_normalize', False):
        images = (images - preprocessor.mean) / preprocessor.std
    return images


@torch.no_grad()
def extract_features(
    model, dataset, args, device: torch.device, what: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """``features [N, D]`` (fp32, on ``device``) and ``labels [N]`` of ``dataset``."""
    if args.max_samples is not None:
        dataset = torch.utils.data.Subset(dataset, range(min(args.max_samples, len(dataset))))
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=args.batch_size, shuffle=False, num_workers=args.num_workers
    )
    print(f'{what}: {len(dataset)} images')
    progress = ProgressBar(len(dataset))
    features, labels = [], []
    for images, targets in loader:
        maps = model.backbone(normalise(model, images.to(device)))[-1]
        if maps.ndim == 4:
            maps = maps.mean(dim=(2, 3))
        elif maps.ndim != 2:
            raise ValueError(
                f"the backbone's last output has shape {tuple(maps.shape)}; "
                'expected [B, C, H, W] or [B, C]'
            )
        features.append(maps.float())
        labels.append(torch.as_tensor(targets).long().to(device))
        progress.update(len(images))
    print()
    return torch.cat(features), torch.cat(labels)


def plot(result, path: str, title: str, **policy) -> None:
    figure, axis = plt.subplots(figsize=(6, 3.6))
    axis.semilogx(
        result.grid,
        [100 * a for a in result.selection_accuracy],
        marker='.',
        label=f'{result.selection} accuracy',
    )
    axis.axvline(
        result.l2,
        color='tab:red',
        linestyle='--',
        label=f'chosen λ = {result.l2:.3g} (test {100 * result.test_accuracy:.2f}%)',
    )
    axis.set_xlabel('L2 weight λ')
    axis.set_ylabel('top-1 accuracy (%)')
    axis.legend(fontsize=8)
    axis.set_title(title, fontsize=9)
    save_figure(figure, path, dpi=120, tight_layout=True, **policy)


def main(argv=None):
    args = parse_args(argv)
    if not 0 < args.val_fraction < 1:
        raise SystemExit(f'--val-fraction must be in (0, 1), got {args.val_fraction}')
    policy = dict(inputs=[args.config, args.checkpoint], overwrite=args.overwrite)
    outputs = output_paths(
        osp.join(args.out_dir, f'linear_probe_{args.dataset}'),
        ['md', 'csv', 'png'] + ['features.npz'] * args.save_features,
        **policy,
    )
    transform = image_transform(
        args.image_size, args.resize_size or round(args.image_size * 256 / 224)
    )
    train_set, test_set = build_datasets(args.dataset, args.data_root, transform)
    cfg = load_config(args.config, args.cfg_options)
    init_default_scope(cfg.get('default_scope', 'mlkd'))
    device = torch.device(args.device)
    model = load_classifier(cfg, args.checkpoint, 'backbone', device)
    train_features, train_labels = extract_features(model, train_set, args, device, 'train')
    test_features, test_labels = extract_features(model, test_set, args, device, 'test')
    num_classes = int(max(train_labels.max(), test_labels.max())) + 1
    print(f'fitting {num_classes}-way linear probes on {train_features.shape[1]}-d features')
    result = select_and_evaluate(
        train_features,
        train_labels,
        test_features,
        test_labels,
        num_classes,
        selection=args.selection,
        val_fraction=args.val_fraction,
        seed=args.seed,
        max_iter=args.max_iter,
    )

    if args.save_features:
        with open_output(outputs['features.npz'], 'wb', **policy) as file:
            np.savez(
                file,
                **{
                    name: tensor.cpu().numpy()
                    for name, tensor in (
                        ('train_features', train_features),
                        ('train_labels', train_labels),
                        ('test_features', test_features),
                        ('test_labels', test_labels),
                    )
                },
            )
    split = (
        f'λ chosen on {result.num_train} train / {result.num_val} validation images (seed '
        f'{args.seed}), the probe then refit on all {result.num_train + result.num_val} / '
        f'{result.num_test} test images'
        if result.selection == 'val'
        else f'{result.num_train} train / {result.num_test} test images'
    )
    summary = (
        f'{args.dataset}: test top-1 {100 * result.test_accuracy:.2f}% at λ = '
        f'{result.l2:.4g}, chosen on the {result.selection} set over {len(result.grid)} '
        f'weights in [{result.grid[0]:g}, {result.grid[-1]:g}]; {split}; '
        f'{osp.basename(args.config)}, checkpoint {args.checkpoint}'
    )
    rows = [
        [f'{l2:.4g}', f'{100 * accuracy:.2f}']
        for l2, accuracy in zip(result.grid, result.selection_accuracy)
    ]
    with open_output(outputs['md'], **policy) as file:
        file.write(
            summary + '\n\n' + render_table(['λ', f'{result.selection} top-1 (%)'], rows) + '\n'
        )
    write_csv(
        outputs['csv'],
        ['l2', f'{result.selection}_accuracy', 'chosen'],
        [
            [l2, accuracy, int(l2 == result.l2)]
            for l2, accuracy in zip(result.grid, result.selection_accuracy)
        ],
        **policy,
    )
    plot(
        result,
        outputs['png'],
        f'Linear probe on {args.dataset}: {osp.basename(args.config)}',
        **policy,
    )
    print(summary)
    print(f'wrote {", ".join(outputs.values())}')
    return result


if __name__ == '__main__':
    main()
