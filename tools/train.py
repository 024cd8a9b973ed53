"""Train a model (a classifier or a distiller) from an mlkd config.

python tools/train.py CONFIG [--work-dir DIR] [--resume [CKPT]] [--amp] [--cfg-options k=v ...]
python tools/train.py CONFIG --vis-backend tensorboard wandb    # log there too
bash tools/dist_train.sh CONFIG GPUS [args]        # torchrun, one process per GPU (or CPU)
"""

import argparse
import os.path as osp

from mmengine.config import Config
from mmengine.runner import find_latest_checkpoint

import mlkd  # noqa: F401  (installs the compatibility shims before any config is parsed)
from mlkd.apis.runs import prepare_training, train
from mlkd.utils.cli import (
    VIS_BACKENDS,
    add_run_arguments,
    load_run_config,
    parse_run_arguments,
    set_vis_backends,
)
from mlkd.utils.dist import finish_distributed, prepare_distributed
from mlkd.utils.output_policy import add_overwrite_argument


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Train a model with mlkd')
    parser.add_argument('config', help='config file path')
    parser.add_argument(
        '--work-dir', help='where logs and checkpoints go (default: work_dirs/<config name>)'
    )
    parser.add_argument(
        '--resume',
        nargs='?',
        type=str,
        const='auto',
        help='resume from CKPT, or without a value from the latest checkpoint in the work dir',
    )
    add_overwrite_argument(
        parser,
        help='train in a work dir that holds a run (of another config, or of this one), moving '
        'that run to a replaced_<timestamp> sub-folder first (without it a run of another config '
        'is refused, and one of the same config goes to a new timestamped sub-folder)',
    )
    parser.add_argument(
        '--amp',
        action='store_true',
        help='automatic mixed precision: float16 with dynamic loss scaling on '
        'CUDA, bfloat16 on CPU (set optim_wrapper.dtype to choose)',
    )
    parser.add_argument(
        '--auto-scale-lr',
        action='store_true',
        help='scale the learning rate by the actual total batch size',
    )
    parser.add_argument('--no-validate', action='store_true', help='skip validation')
    parser.add_argument(
        '--validate-data',
        action='store_true',
        help='before training, decode every image of the training and '
        'validation sets once: unreadable, truncated or too small images are '
        'named (without it they fail when first loaded)',
    )
    parser.add_argument(
        '--vis-backend',
        nargs='+',
        choices=list(VIS_BACKENDS),
        help='also log scalars to these visualizer backends (tensorboard needs '
        'the tensorboard package, wandb the wandb package); the local '
        'scalars.json log is always written',
    )
    add_run_arguments(parser, cfg_options_example='train_cfg.max_epochs=3')
    return parse_run_arguments(parser, argv)


def build_cfg(args: argparse.Namespace) -> Config:
    options = dict(args.cfg_options or {})
    if args.amp:  # an option, so that the key checks see the type (and its dtype keyword)
        options['optim_wrapper.type'] = 'MixedPrecisionOptimWrapper'
    cfg = load_run_config(args.config, options, args.launcher, args.work_dir)
    if args.resume == 'auto':
        # mmengine would log "Auto resumed from the latest checkpoint None" and start afresh.
        if find_latest_checkpoint(cfg.work_dir) is None:
            raise FileNotFoundError(
                f'--resume: the work dir {cfg.work_dir!r} holds no checkpoint to resume from '
                '(no last_checkpoint file); pass --resume CKPT, or drop --resume to start afresh'
            )
        cfg.resume, cfg.load_from = True, None
    elif args.resume is not None:
        if not osp.isfile(args.resume):
            raise FileNotFoundError(f'--resume checkpoint not found: {args.resume}')
        cfg.resume, cfg.load_from = True, args.resume
    if args.auto_scale_lr:
        cfg.setdefault('auto_scale_lr', {})['enable'] = True
    if args.vis_backend:
        set_vis_backends(cfg, args.vis_backend)
    if args.no_validate:
        cfg.val_cfg = cfg.val_dataloader = cfg.val_evaluator = None
    if (
        cfg.get('load_from')
        and not cfg.get('resume')
        and not osp.isfile(cfg.load_from)
        and '://' not in cfg.load_from
    ):
        raise FileNotFoundError(f'load_from checkpoint not found: {cfg.load_from}')
    prepare_distributed(cfg, args.launcher)
    prepare_training(  # refused here, before --validate-data reads every image
        cfg,
        resume=bool(cfg.get('resume')),
        overwrite=getattr(args, 'overwrite', False),
        distributed=args.launcher != 'none',
    )
    return cfg


def validate_data(cfg: Config) -> None:
    """``--validate-data``: every image of the training and validation sets decodes and is at
    least as large as a crop that does not resize it (:mod:`mlkd.datasets.validation`)."""
    from mmengine.registry import DefaultScope

    from mlkd.datasets.validation import plain_crop_size, validate_images
    from mlkd.registry import DATASETS

    for key in ('train_dataloader', 'val_dataloader'):
        if not cfg.get(key):
            continue
        dataset_cfg = cfg[key].dataset
        with DefaultScope.overwrite_default_scope(cfg.get('default_scope', 'mlkd')):
            dataset = DATASETS.build(dataset_cfg)
        count = validate_images(
            dataset, plain_crop_size(dataset_cfg.get('pipeline')), f'{key}.dataset'
        )
        print(f'--validate-data: {key}.dataset: {count} images decoded, all usable', flush=True)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    cfg = build_cfg(args)
    if args.validate_data:
        validate_data(cfg)
    train(cfg, prepared=True)  # runner_type (MLKDRunner), else mmengine's Runner
    finish_distributed()


if __name__ == '__main__':
    main()
