"""The main job: what distillation does on the bundled MultiDigits data, end to end, on CPUs.

    python tools/demo.py [--seeds 0] [--stages teacher student KD ...] [--jobs N] [--work-dir DIR]
    python tools/demo.py --benchmark multi-teacher [--seeds 0 1 2] ...
    python tools/demo.py --benchmark ranking [--seeds 0 1 2 3 4] ...
    python tools/demo.py --benchmark task-losses [--seeds 0 1 2 3 4] ...

``--benchmark multi-teacher`` runs the other benchmark (docs/multi_teacher.md): two teachers of
partial label sets (digits 0-6, 3-9), each trained once, the plain student and the student
distilled from each teacher alone and from both (``mlkd.apis.demo.MULTI_TEACHER``; each teacher
has its own cache per seed). ``--benchmark ranking`` runs the ranking benchmark on DigitScenes
(docs/benchmarks/ranking_search.md; frozen: weights chosen on val); ``--benchmark task-losses``
the Two-way paper's task losses on its student, trained on complete labels (no teacher). What
follows describes the default, ``--benchmark demo``.

Protocol (docs/demo.md): train / val / test images are built from disjoint pools of handwritten
scans (4 x 4 mosaics of 8-pixel digits); teacher and student backbones start from the bundled
MultiGlyphs pretraining (mlkd/weights, sha256-checked); every stage trains with its config's
recipe (students 12 epochs, the teacher 6) and reports its **test** metrics (mAP, CF1 and OF1 at
threshold 0.5) after the last epoch; nothing is selected on test. A seed sets the data order and
augmentation (the configs' ``seed_key``); every run starts from the same initialisation. The
teacher is trained once (with the first seed) and shared by all seeds; each seed then trains the
plain student and every distilled student (KD, MSE, PS, MLD, MDKD, 3D, L2D;
``configs/demo/*.py``, weights chosen on val). ``3D-paper`` / ``L2D-paper`` apply the papers'
weights literally.

The teacher runs once per seed for all distilled students: its outputs on that seed's training
batches are cached in ``<work-dir>/seed<S>/teacher_cache`` (docs/teacher_cache.md; exact) and every
distilled stage reads them. Every stage computes on one thread; ``--jobs N`` (default: the number
of CPU cores) trains N stages side by side in worker processes, as soon as what they need (the
teacher, the seed's cache) is there; a stage gives the same numbers whatever N. A seed's cache is
filled the same way, by ``min(N, epochs)`` tasks side by side (task k of N: epochs k, k + N, ...;
the bytes do not depend on the split).

With one job each stage shows a progress line, with several one line per start and end; at the end
a table (mean ± std over seeds) is printed and the benchmark's chart (the demo's
``<work-dir>/demo.png``: test mAP per model, one dot per seed) and ``<work-dir>/results.json``
(every stage's val and test metrics per seed, with the protocol: commit and config digests) are
written. Every stage is an ordinary config run by the runner the config names (``MLKDRunner``,
:func:`mlkd.apis.train`); the same configs work with ``tools/train.py``. Before any training the
tool refuses duplicate or negative seeds, repeated stages and a work dir holding results of another
protocol (another commit, or another resolved config of a stage); ``--resume`` reuses the finished
stages of an earlier call of the same protocol, ``--overwrite`` retrains them; without either, what
an earlier call left is refused."""

from __future__ import annotations

import argparse
import os

import mlkd  # noqa: F401
from mlkd.apis import BENCHMARKS, BenchmarkRequestError, ProtocolError, run_benchmark
from mlkd.teacher_cache import TeacherCacheError
from mlkd.utils.cli import add_cfg_options_argument, add_jobs_arguments
from mlkd.utils.output_policy import add_overwrite_argument
from mlkd.utils.work_dir import WorkDirConflictError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        '--benchmark',
        choices=list(BENCHMARKS),
        default='demo',
        help='demo: every method (docs/demo.md); multi-teacher: teachers of partial label sets '
        '(docs/multi_teacher.md); ranking: DigitScenes (docs/benchmarks/ranking_search.md); '
        "task-losses: the Two-way paper's task losses on the ranking student; single-positive: "
        "the SCL paper's single-positive losses on it (docs/benchmarks/single_positive.md)",
    )
    parser.add_argument(
        '--work-dir',
        help='default: work_dirs/<benchmark> (work_dirs/multi_teacher for multi-teacher)',
    )
    parser.add_argument(
        '--seeds',
        type=int,
        nargs='+',
        default=[0],
        help='distinct non-negative seeds; the first one trains the teacher. A '
        "seed sets the data order and augmentation (the configs' seed_key); "
        'every run starts from the same initialisation',
    )
    parser.add_argument(
        '--stages',
        nargs='+',
        help='stages of the benchmark (default: its default stages); '
        + '; '.join(f'{name}: ' + ' '.join(b.stages) for name, b in BENCHMARKS.items()),
    )
    parser.add_argument(
        '--teacher-ckpt', help='use (and evaluate) this teacher instead of training one'
    )
    parser.add_argument(
        '--resume',
        action='store_true',
        help='reuse stages finished by an earlier call with this work dir (same '
        'commit and configs, else refused)',
    )
    add_overwrite_argument(
        parser,
        help='retrain stages whose results are already in the work '
        'dir and replace results.json and the chart (never deleting other '
        'files)',
    )
    add_cfg_options_argument(
        parser, help='config overrides applied to every stage (e.g. a shorter run)'
    )
    add_jobs_arguments(parser, default=os.cpu_count() or 1, what='stages')  # all cores
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    benchmark = BENCHMARKS[args.benchmark]
    work_dir = args.work_dir or f'work_dirs/{args.benchmark.replace("-", "_")}'
    try:
        run_benchmark(
            benchmark,
            work_dir,
            seeds=args.seeds,
            stages=args.stages,
            teacher_ckpt=args.teacher_ckpt,
            options=args.cfg_options,
            jobs=args.jobs,
            resume=args.resume,
            overwrite=args.overwrite,
            verbose=args.verbose,
        )
    except BenchmarkRequestError as error:
        parser.error(str(error))
    except (ProtocolError, WorkDirConflictError, TeacherCacheError) as error:
        raise SystemExit(f'demo.py: {error}') from None


if __name__ == '__main__':
    main()
