"""The bundled-data studies of the intra-class contrastive teacher (configs/intra_class/README.md).

For each seed it trains, on the single-label data of ``--data`` (MultiDigits, 10 classes,
configs/intra_class/multidigits/, or DigitObjects, 100 classes, configs/intra_class/digit_objects/),
the plain and the intra-class contrastive teacher, the student alone and, from each teacher of the
same seed, the student with KD and with KD + RKD; it evaluates every run's last weights on val and
test (top-1; val only with ``--val-only``, the call that chooses a regime, whose files are
``intra_class_study_val.*``) and writes ``intra_class_study.{md,csv,png,json}`` to ``--out-dir``:
mean ± std over seeds
per arm and the paired differences (same seed) with a 95 % Student-t interval
(:mod:`mlkd.apis.intra_class`). Every run stores its result in
``<work-dir>/seed<S>/<run>/result.json`` with the fingerprint of its config (a distilled run's
with its teacher's); a stored result is reused only for the same config, and one of another config
is refused before anything trains (``--overwrite`` trains it again). A call that reads test in
the work dir of a ``--val-only`` call evaluates test on those runs' checkpoints (their val is
evaluated again and must be the stored one) and trains only what is missing: choose on val,
freeze, then read test once on the same networks. ``--fidelity`` also measures on test every
student's fidelity to both teachers of its seed (top-1 agreement, KL; the student alone included)
and writes ``intra_class_fidelity.{md,json}``.

    OMP_NUM_THREADS=1 python tools/analysis_tools/intra_class_study.py \
        --seeds 0 1 2 --work-dir work_dirs/intra_class_study --out-dir configs/intra_class

With ``--search-rkd-weights W ...`` it runs, instead, the validation search of the RKD loss
weight of the KD+RKD runs (from the plain teacher, every seed, val only, per-term loss and
gradient diagnostics, agreement with the teacher; ``intra_class_rkd_search.{md,csv,png,json}``);
the plain teachers and the students alone are the study's own runs (shared with it):

    OMP_NUM_THREADS=1 python tools/analysis_tools/intra_class_study.py --seeds 0 1 2 \
        --search-rkd-weights 1 0.1 0.03 0.01 0.001 \
        --work-dir work_dirs/intra_class_study --out-dir configs/intra_class
"""

from __future__ import annotations

import argparse

from mlkd.utils.cli import add_cfg_options_argument, add_jobs_arguments, study_call_arguments
from mlkd.utils.output_policy import add_overwrite_argument


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--seeds', type=int, nargs='+', default=[0, 1, 2])
    parser.add_argument(
        '--data',
        default='multidigits',
        help="the study's data: single-label MultiDigits (10 classes, configs/intra_class/"
        'multidigits) or DigitObjects (100 classes, configs/intra_class/digit_objects)',
    )
    parser.add_argument(
        '--val-only',
        action='store_true',
        help='evaluate no run on test: the study writes intra_class_study_val.* (val columns '
        'only), the search its plain teachers and students alone without test; for choosing a '
        'regime on val (read test later in another --work-dir)',
    )
    parser.add_argument(
        '--work-dir',
        default='work_dirs/intra_class_study',
        help='the runs and their results (reused for the same config)',
    )
    parser.add_argument(
        '--out-dir',
        default='work_dirs/intra_class_study',
        help='where the tables, CSV, JSON and chart go (intra_class_study.*, with --val-only '
        'intra_class_study_val.*, with --search-rkd-weights intra_class_rkd_search.*)',
    )
    parser.add_argument(
        '--epochs',
        type=int,
        help="train every run for this many epochs instead of the configs' (10 on "
        'MultiDigits, 24 on DigitObjects; for trying the tool out, the study uses the configs)',
    )
    parser.add_argument(
        '--search-rkd-weights',
        type=float,
        nargs='+',
        metavar='W',
        help='instead of the study: train KD+RKD from the plain teacher with each RKD loss weight '
        "(1 = the paper's distance 25, angle 50) on every seed, read val only, and write "
        'intra_class_rkd_search.md / .csv / .png / .json (the weight of the highest mean val '
        'top-1 is the chosen one)',
    )
    parser.add_argument(
        '--runs',
        nargs='+',
        metavar='RUN',
        help='train (or reuse) only these arms of the study, with the teacher runs they need, '
        'and table them (teacher, teacher_intra_class, student, kd, ours, kd_rkd, ours_rkd; '
        "e.g. the positive control's teacher student kd)",
    )
    parser.add_argument(
        '--fidelity',
        action='store_true',
        help="also measure on test each student's fidelity to both teachers of its seed (top-1 "
        'agreement, KL; the student alone too) and write intra_class_fidelity.md / .json',
    )
    parser.add_argument(
        '--diagnostics-interval',
        type=int,
        default=8,
        help='iterations between two per-term loss / gradient records of the search runs',
    )
    add_cfg_options_argument(
        parser,
        help='config overrides applied to every run (e.g. less data, for trying the tool out)',
    )
    add_jobs_arguments(parser)
    add_overwrite_argument(
        parser,
        help='replace the tables, CSV, JSON and chart, and train again the runs whose stored '
        'result was made by another config',
    )
    return parser


def main(argv: list[str] | None = None) -> tuple[list[dict], list[dict]] | list[dict]:
    """The study's arms and paired rows, or with ``--search-rkd-weights`` the search's rows."""
    parser = build_parser()
    args = parser.parse_args(argv)
    from mlkd.apis.intra_class import run_intra_class_study, run_rkd_search  # after --help
    from mlkd.apis.runs import StaleResultError
    from mlkd.apis.study import StudyRequestError
    from mlkd.utils.work_dir import WorkDirConflictError

    common = dict(study_call_arguments(args), data=args.data)
    if args.fidelity and args.search_rkd_weights:
        parser.error('--fidelity measures the study, not the search: drop --search-rkd-weights')
    if args.runs and args.search_rkd_weights:
        parser.error('--runs chooses arms of the study, not of the search')
    try:
        if args.search_rkd_weights:
            return run_rkd_search(
                args.work_dir,
                args.out_dir,
                weights=args.search_rkd_weights,
                interval=args.diagnostics_interval,
                val_only=args.val_only,
                **common,
            )
        return run_intra_class_study(
            args.work_dir,
            args.out_dir,
            val_only=args.val_only,
            fidelity=args.fidelity,
            runs=args.runs,
            **common,
        )
    except StudyRequestError as error:
        parser.error(str(error))
    except (StaleResultError, WorkDirConflictError) as error:
        raise SystemExit(f'intra_class_study.py: {error}') from None


if __name__ == '__main__':
    main()
