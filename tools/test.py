"""Evaluate a checkpoint: ``python tools/test.py CONFIG CKPT [--out results.npz]``.

On a distillation config the student is evaluated (the distiller's ``predict`` is the student's).
Prints the metrics and, for multi-label metrics, a per-class AP table.

``--teacher TEACHER_CONFIG TEACHER_CKPT`` scores a plain (non-distilled) classifier against a
teacher: the classifier is evaluated inside a :class:`SingleTeacherDistiller` without losses, and a
``DistillFidelity`` metric is added to the test evaluator (where the config has none), so a plain
student baseline gets the same ``fidelity/*`` keys as its distilled versions.
"""

import argparse
import os
import os.path as osp

from mmengine.config import DictAction
from mmengine.runner import Runner

import mlkd  # noqa: F401  (installs the compatibility shims before any config is parsed)
from mlkd.utils.cli import add_trust_checkpoint_argument, load_run_config
from mlkd.utils.dist import finish_distributed, prepare_distributed
from mlkd.utils.output_policy import add_overwrite_argument, check_output


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Evaluate a checkpoint with mlkd')
    parser.add_argument('config', help='config file path')
    parser.add_argument('checkpoint', help='checkpoint file')
    parser.add_argument('--work-dir', help='where the evaluation log goes')
    parser.add_argument('--out', help='write scores and labels of every image to this .npz file')
    add_overwrite_argument(parser)
    parser.add_argument(
        '--cfg-options',
        nargs='+',
        action=DictAction,
        help='override config entries, e.g. test_dataloader.batch_size=32',
    )
    parser.add_argument(
        '--teacher',
        nargs=2,
        metavar=('TEACHER_CONFIG', 'TEACHER_CKPT'),
        help="score a plain classifier's fidelity to this teacher (its training config and "
        'checkpoint or work dir): adds DistillFidelity to the test evaluator',
    )
    add_trust_checkpoint_argument(parser)
    parser.add_argument('--launcher', choices=['none', 'pytorch', 'slurm'], default='none')
    parser.add_argument('--local_rank', '--local-rank', type=int, default=0)
    args = parser.parse_args(argv)
    os.environ.setdefault('LOCAL_RANK', str(args.local_rank))
    return args


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


def score_against_teacher(cfg, teacher_config: str, teacher_ckpt: str) -> None:
    """Make ``cfg``'s plain classifier the student of a loss-free distiller of the teacher, and
    add ``DistillFidelity`` to its test evaluator (unless it has one). In place.

    The classifier's weights are then loaded into ``model.student`` (:func:`main`), not through
    ``load_from``, whose keys would lack the ``student.`` prefix.
    """
    model = cfg.model.to_dict() if hasattr(cfg.model, 'to_dict') else dict(cfg.model)
    if 'teacher' in model or 'student' in model:
        raise ValueError(
            f'--teacher scores a plain classifier, but {cfg.filename} defines model.type='
            f'{model.get("type")!r}; a distillation config evaluates its student against its own '
            'teacher (add DistillFidelity to its test_evaluator)'
        )
    if not osp.isfile(teacher_config):
        raise FileNotFoundError(f'--teacher: config file not found: {teacher_config}')
    preprocessor = model.pop('data_preprocessor', None) or cfg.get('data_preprocessor')
    cfg.model = dict(
        type='SingleTeacherDistiller',
        student=model,
        teacher=teacher_config,
        teacher_ckpt=teacher_ckpt,
        data_preprocessor=preprocessor,
    )
    evaluators = cfg.test_evaluator
    evaluators = list(evaluators) if isinstance(evaluators, (list, tuple)) else [evaluators]
    if not any(e.get('type') == 'DistillFidelity' for e in evaluators):
        evaluators.append(dict(type='DistillFidelity'))
    cfg.test_evaluator = evaluators


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if not osp.isfile(args.checkpoint):
        raise FileNotFoundError(f'checkpoint file not found: {args.checkpoint}')
    cfg = load_run_config(args.config, args.cfg_options, args.launcher, args.work_dir)
    cfg.load_from = args.checkpoint
    cfg.resume = False
    if args.teacher:
        score_against_teacher(cfg, *args.teacher)
        cfg.load_from = None  # the student's weights are loaded below, into model.student
    if args.out:  # checked before the evaluation; DumpScores writes it atomically
        check_output(args.out, inputs=[args.config, args.checkpoint], overwrite=args.overwrite)
        evaluators = cfg.test_evaluator
        evaluators = list(evaluators) if isinstance(evaluators, (list, tuple)) else [evaluators]
        cfg.test_evaluator = evaluators + [dict(type='DumpScores', out_file=args.out)]
    prepare_distributed(cfg, args.launcher)
    runner = Runner.from_cfg(cfg)
    if args.teacher:
        from mlkd.models.utils import unwrap_model
        from mlkd.models.weights import load_network_checkpoint

        load_network_checkpoint(unwrap_model(runner.model).student, args.checkpoint, 'student')
    runner.test()
    finish_distributed()
    if runner.rank == 0:
        classes = runner.test_dataloader.dataset.metainfo.get('classes')
        table = per_class_ap_table(runner.test_evaluator, classes)
        if table:
            print(table)
        if args.out:
            print(f'scores and labels written to {args.out}')


if __name__ == '__main__':
    main()
