"""Train configs on their own for several seeds, val only or val and test; write their results.

    OMP_NUM_THREADS=1 python tools/analysis_tools/study.py configs/ranking/single_positive/*.py \
        --seeds 0 1 2 3 4 --val-only --jobs 2 \
        --work-dir work_dirs/single_positive --out work_dirs/single_positive/results_val.json
    python tools/analysis_tools/demo_paired.py work_dirs/single_positive/results_val.json \
        --split val --baselines an --out work_dirs/single_positive/val_vs_an

Each config is one run per seed, named by its file's stem (no teacher: a comparison of task
losses, of single-positive losses). Every run stores its result in
``<work-dir>/seed<S>/<run>/result.json`` with the fingerprint of its config; a stored result is
reused only for the same config, one of another config is refused before anything trains
(``--overwrite`` trains it again). ``--val-only`` reads val only: the calls that choose a regime
or a setting. A later call without it in the same work dir reads test on those runs'
checkpoints (their val evaluated again must equal the stored one) and trains only what is
missing: choose on val, freeze, read test once on the same networks (:mod:`mlkd.apis.study`).

``--out`` is written in the format of ``tools/demo.py``'s ``results.json`` (each run's per-seed
val and test metrics, CPU time, config fingerprint and the commit it trained on; the commit of
the call), which
``tools/analysis_tools/demo_paired.py`` compares: paired differences against a baseline run and
claims "A beats B", on ``--split val`` or test. The table of every run (mean ± std) is printed.

A study can be split over machines or calls: ``--reuse`` takes the runs of results files written
by ``--out`` elsewhere (same config and seed, by fingerprint) instead of training them, and
``--stored-only`` trains nothing and writes what the work dir holds, a partial file naming the
runs it lacks (``protocol.missing``; ``demo_paired.py`` refuses it) that a later call, on
another machine, continues with ``--reuse``. The checkpoints stay where they were made, so a
run taken that way never has one here: a later call that reads test on it is refused (or, with
``--overwrite``, trains it again), as is a distilled run to train whose teacher was taken.
"""

from __future__ import annotations

import argparse
import json

from mlkd.utils.cli import add_cfg_options_argument, add_jobs_arguments, study_call_arguments
from mlkd.utils.output_policy import add_overwrite_argument


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('configs', nargs='+', help='one run per config, named by its file stem')
    parser.add_argument('--seeds', type=int, nargs='+', default=[0, 1, 2])
    parser.add_argument('--work-dir', required=True, help="the runs' folders and results")
    parser.add_argument('--out', required=True, help='the results JSON (demo_paired.py reads it)')
    parser.add_argument(
        '--val-only',
        action='store_true',
        help='no run reads test (choosing a regime or a setting); a later call without it reads '
        'test on the same checkpoints',
    )
    parser.add_argument(
        '--metrics',
        nargs='+',
        help="the evaluator keys every run reports (default: mAP and the F1s, MultiLabelMetric's; "
        'accuracy/top1 for a single-label config)',
    )
    parser.add_argument(
        '--epochs',
        type=int,
        help="train every run for this many epochs instead of the configs' (for trying it out)",
    )
    parser.add_argument(
        '--reuse',
        nargs='+',
        default=[],
        metavar='RESULTS',
        help='(after the configs) results files written by --out of other calls (another '
        'machine, a stopped call): their runs of the same config and seed are taken instead of '
        'trained, without their checkpoints',
    )
    parser.add_argument(
        '--stored-only',
        action='store_true',
        help='train nothing: write --out from the runs stored in --work-dir (and --reuse), a '
        'partial file naming those not stored',
    )
    add_cfg_options_argument(parser, help='config overrides applied to every run')
    add_jobs_arguments(parser)
    add_overwrite_argument(
        parser,
        help='replace --out, and train again the runs whose stored result was made by another '
        'config',
    )
    return parser


def main(argv: list[str] | None = None) -> dict:
    """The results as written to ``--out``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    from mlkd.apis.benchmark import git_commit  # after --help
    from mlkd.apis.config_study import config_study, render_results, study_results
    from mlkd.apis.runs import METRICS, MetricsNotLoggedError, StaleResultError
    from mlkd.apis.study import (
        ResultsFileError,
        StudyRequestError,
        read_results_file,
        run_study,
    )
    from mlkd.utils.output_policy import check_output, open_output
    from mlkd.utils.work_dir import WorkDirConflictError

    check_output(args.out, inputs=args.reuse, overwrite=True)  # an input, even with --overwrite
    # The code the call's runs train with: read before they start (a commit made while they run
    # is not theirs).
    commit = git_commit()
    try:
        metrics = args.metrics or METRICS
        study = config_study(args.configs, test=not args.val_only, metrics=metrics)
        call = study_call_arguments(args)
        reuse = {path: read_results_file(path) for path in args.reuse}
        runs = run_study(
            study,
            args.work_dir,
            outputs=[args.out],
            reuse=reuse,
            stored_only=args.stored_only,
            commit=commit,
            **call,
        )
    except StudyRequestError as error:
        parser.error(str(error))
    except (
        StaleResultError,
        ResultsFileError,
        MetricsNotLoggedError,
        WorkDirConflictError,
    ) as error:
        raise SystemExit(f'study.py: {error}') from None
    saved = study_results(runs, args.seeds, commit, names=list(study.runs))
    # The files runs were taken from and the commits that trained them (each run's `commit`).
    reused: dict[str, set] = {}
    for result in (r for by_run in runs.values() for r in by_run.values()):
        if 'taken_from' in result:
            reused.setdefault(result['taken_from']['file'], set()).add(
                result['taken_from']['commit']
            )
    if reused:
        saved['protocol']['reused'] = {
            file: sorted(commits, key=str) for file, commits in reused.items()
        }
    table = render_results(saved, study.metrics)
    with open_output(args.out, overwrite=args.overwrite, inputs=args.reuse) as file:
        json.dump(saved, file, indent=1)
    print(table, flush=True)
    print(f'wrote {args.out}', flush=True)
    return saved


if __name__ == '__main__':
    main()
