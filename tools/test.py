"""Evaluate a checkpoint: ``python tools/test.py CONFIG CKPT [--out results.npz]``.

On a distillation config the student is evaluated (the distiller's ``predict`` is the student's).
Prints the metrics and, for multi-label metrics, a per-class AP table.

``--teacher TEACHER_CONFIG TEACHER_CKPT`` scores a plain (non-distilled) classifier against a
teacher: the classifier is evaluated inside a :class:`SingleTeacherDistiller` without losses, and a
``DistillFidelity`` metric is added to the test evaluator (where the config has none), so a plain
student baseline gets the same ``fidelity/*`` keys as its distilled versions.
"""

import argparse
import os.path as osp

import mlkd  # noqa: F401  (installs the compatibility shims before any config is parsed)
from mlkd.apis.runs import evaluate
from mlkd.models.weights import resolve_checkpoint
from mlkd.utils.cli import add_run_arguments, load_run_config, parse_run_arguments
from mlkd.utils.dist import finish_distributed, prepare_distributed
from mlkd.utils.output_policy import add_overwrite_argument, check_output


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Evaluate a checkpoint with mlkd')
    parser.add_argument('config', help='config file path')
    parser.add_argument('checkpoint', help='checkpoint file, or a work dir (its last checkpoint)')
    parser.add_argument(
        '--work-dir',
        help="where the evaluation log goes (default: the config's work dir + /test, so that "
        "the training's config dump there, which the results tools read, is not replaced)",
    )
    parser.add_argument('--out', help='write scores and labels of every image to this .npz file')
    add_overwrite_argument(parser)
    parser.add_argument(
        '--teacher',
        nargs=2,
        metavar=('TEACHER_CONFIG', 'TEACHER_CKPT'),
        help="score a plain classifier's fidelity to this teacher (its training config and "
        'checkpoint or work dir): adds DistillFidelity to the test evaluator',
    )
    add_run_arguments(parser, cfg_options_example='test_dataloader.batch_size=32')
    return parse_run_arguments(parser, argv)


def per_class_ap_table(evaluator, class_names) -> str | None:
    """terminaltables rendering of the per-class AP kept by MultiLabelMetrics, if any."""
    from terminaltables import AsciiTable

    for metric in getattr(evaluator, 'metrics', []):
        ap = getattr(metric, 'last_per_class_ap', None)
        if ap is None:
            continue
        names = list(class_names) if class_names else [str(i) for i in range(len(ap))]
        rows = [['class', 'AP (%)']]
        rows += [[name, f'{100 * float(v):.2f}' if v == v else 'n/a'] for name, v in zip(names, ap)]
        return AsciiTable(rows, title='per-class AP').table
    return None


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    args.checkpoint = resolve_checkpoint(args.checkpoint)  # a file, a work dir (its last), a URL
    cfg = load_run_config(args.config, args.cfg_options, args.launcher, args.work_dir)
    if args.work_dir is None:
        cfg.work_dir = osp.join(cfg.work_dir, 'test')
    if args.out:  # checked before the evaluation; DumpScores writes it atomically
        check_output(args.out, inputs=[args.config, args.checkpoint], overwrite=args.overwrite)
        evaluators = cfg.test_evaluator
        evaluators = list(evaluators) if isinstance(evaluators, (list, tuple)) else [evaluators]
        cfg.test_evaluator = evaluators + [dict(type='DumpScores', out_file=args.out)]
    prepare_distributed(cfg, args.launcher)
    # runner_type (MLKDRunner), else mmengine's Runner
    runner, _ = evaluate(cfg, args.checkpoint, teacher=args.teacher)
    rank, table = runner.rank, None
    if rank == 0:
        classes = runner.test_dataloader.dataset.metainfo.get('classes')
        table = per_class_ap_table(runner.test_evaluator, classes)
    del runner  # its model wrapper holds the process group, which finish_distributed destroys
    finish_distributed()
    if rank == 0:
        if table:
            print(table)
        if args.out:
            print(f'scores and labels written to {args.out}')


if __name__ == '__main__':
    main()
