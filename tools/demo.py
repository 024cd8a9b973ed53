"""The main job: what distillation does on the bundled MultiDigits data, end to end, on CPUs.

    python tools/demo.py [--seeds 0] [--stages teacher student KD ...] [--jobs N] [--work-dir DIR]

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

With one job each stage shows a progress line, with several one line per start and end; at the
end a table (mean ± std over seeds) is printed and ``<work-dir>/demo.png`` (test mAP per model,
one dot per seed) and ``<work-dir>/results.json`` (every stage's val and test metrics per seed,
with the protocol: commit and config digests) are written. Every stage is an ordinary config run
through mmengine's Runner; the same configs work with ``tools/train.py``. Before any training the
tool refuses duplicate or negative seeds, repeated stages and a work dir holding results of
another protocol (another commit, or another resolved config of a stage); ``--resume`` reuses the
finished stages of an earlier call of the same protocol, ``--overwrite`` retrains them; without
either, what an earlier call left is refused.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import multiprocessing
import os
import os.path as osp
import statistics
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
for path in (ROOT, osp.join(ROOT, 'tools')):  # the package, and cache_teacher's filler
    if path not in sys.path:
        sys.path.insert(0, path)

from mmengine.config import Config, DictAction  # noqa: E402

import mlkd  # noqa: E402,F401
from mlkd.engine.runs import (  # noqa: E402
    METRICS,
    evaluate_checkpoint,
    set_run_seed,
    train_and_evaluate,  # noqa: E402
    write_json_atomic,
)
from mlkd.models.distillers import teacher_cache as cache_format  # noqa: E402
from mlkd.utils.cli import load_config  # noqa: E402
from mlkd.utils.output_policy import (  # noqa: E402
    add_overwrite_argument,
    check_outputs,  # noqa: E402
    save_figure,
)

STAGES = {
    'teacher': 'configs/demo/teacher.py',
    'student': 'configs/demo/student.py',
    'KD': 'configs/demo/kd.py',
    'MSE': 'configs/demo/mse.py',
    'PS': 'configs/demo/ps.py',
    'MLD': 'configs/demo/mld.py',
    'MDKD': 'configs/demo/mdkd.py',
    '3D': 'configs/demo/3d.py',
    'L2D': 'configs/demo/l2d.py',
    '3D-paper': 'configs/demo/3d_paper_weights.py',
    'L2D-paper': 'configs/demo/l2d_paper_weights.py',
}
DEFAULT_STAGES = ['teacher', 'student', 'KD', 'MSE', 'PS', 'MLD', 'MDKD', '3D', 'L2D']
#: Per-term diagnostics of the distilled stages, once per epoch (MultiDigits: 24 iterations).
DIAGNOSTICS = dict(type='LossDiagnosticsHook', interval=24)


def stage_config(
    name: str, work_dir: str, seed: int, teacher_ckpt: str | None, options: dict | None = None
) -> Config:
    """The resolved config of stage ``name`` for ``seed``, training in ``work_dir``
    (``<demo work dir>/seed<S>/<stage>``). A distilled stage reads its teacher's outputs from the
    seed's teacher cache (``<demo work dir>/seed<S>/teacher_cache``, filled once per seed)."""
    cfg = load_config(osp.join(ROOT, STAGES[name]), options)  # --cfg-options keys checked
    cfg.work_dir = work_dir
    set_run_seed(cfg, seed)
    if cfg.model.type == 'SingleTeacherDistiller':
        cfg.model.teacher_ckpt = teacher_ckpt
        cfg.model.teacher_cache = dict(dir=teacher_cache_dir(osp.dirname(work_dir)), mode='read')
        cfg.custom_hooks = list(cfg.custom_hooks) + [dict(DIAGNOSTICS)]
    return cfg


def teacher_cache_dir(seed_dir: str) -> str:
    """Where the distilled stages of one seed (``seed_dir``) share their teacher's outputs."""
    return osp.join(seed_dir, 'teacher_cache')


def git_commit() -> str:
    """The repository's HEAD commit, with ``+dirty`` when tracked files differ from it."""
    try:
        head = subprocess.run(
            ['git', 'rev-parse', 'HEAD'], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ['git', 'status', '--porcelain', '--untracked-files=no'],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return 'unknown (not a git checkout)'
    return head + ('+dirty' if dirty.strip() else '')


def config_digest(cfg: Config, work_dir: str, given_checkpoint: str | None = None) -> str:
    """sha256 of a stage's resolved config (and of the checkpoint path it evaluates instead of
    training, if any), independent of where the repository and work dir are."""
    text = cfg.pretty_text.replace(osp.abspath(work_dir), '<work-dir>').replace(
        work_dir, '<work-dir>'
    )
    if given_checkpoint is not None:
        text += f'\ngiven_checkpoint = {osp.abspath(given_checkpoint)!r}'
    work_root = osp.dirname(osp.dirname(work_dir))  # the demo's work dir (cache paths)
    text = text.replace(osp.abspath(work_root), '<demo-dir>')
    if work_root not in ('', '.'):
        text = text.replace(work_root, '<demo-dir>')
    return hashlib.sha256(text.replace(ROOT, '<repo>').encode()).hexdigest()


def protocol_of(
    stages: list[str],
    seeds: list[int],
    options: dict,
    work_dir: str,
    given_teacher: str | None = None,
) -> dict:
    """What a result depends on: the code's commit and each stage's resolved config (for the
    teacher and the distilled stages, also the teacher checkpoint given with ``--teacher-ckpt``:
    a distilled result of another teacher is not this protocol's)."""
    configs = {}
    for name in stages:
        cfg = stage_config(name, osp.join(work_dir, 'seed0', name), 0, 'teacher.pth', options)
        configs[name] = config_digest(
            cfg, osp.join(work_dir, 'seed0', name), given_teacher if name != 'student' else None
        )
    return dict(commit=git_commit(), configs=configs)


def check_protocol(found: dict, expected: dict, where: str) -> None:
    """Refuse results of another protocol: another commit, or another config for a stage."""
    problems = []
    if found.get('commit') != expected['commit']:
        problems.append(f'commit {found.get("commit")!r} (now {expected["commit"]!r})')
    for name, digest in found.get('configs', {}).items():
        if name in expected['configs'] and digest != expected['configs'][name]:
            problems.append(
                f'the {name} config (sha256 {digest[:12]}, now {expected["configs"][name][:12]})'
            )
    if problems:
        raise SystemExit(
            f'demo.py: {where} holds results of another protocol: '
            + '; '.join(problems)
            + '. Use another --work-dir (results of two '
            'protocols are never mixed).'
        )


def validate_results(data: dict) -> None:
    """Check a ``results.json``: every stage's val and test metrics for every seed it ran.

    Raises:
        ValueError: naming the stage, seed and key at fault.
    """
    for key in ('seeds', 'stages', 'protocol', 'teacher_ckpt', 'results'):
        if key not in data:
            raise ValueError(f'results.json: missing key {key!r}')
    for name in data['stages']:
        runs = data['results'].get(name)
        if runs is None:
            raise ValueError(f'results.json: stage {name!r} has no results')
        expected = data['seeds'][:1] if name == 'teacher' else data['seeds']
        if [run.get('seed') for run in runs] != expected:
            raise ValueError(
                f'results.json: stage {name!r} has seeds '
                f'{[run.get("seed") for run in runs]}, expected {expected}'
            )
        for run in runs:
            for split in ('val', 'test'):
                metrics = run.get(split, {})
                missing = [m for m in METRICS if not isinstance(metrics.get(m), float)]
                if missing:
                    raise ValueError(
                        f'results.json: stage {name!r} seed {run["seed"]}: '
                        f'{split} metrics {missing} missing or not numbers'
                    )


def cell(values: list[float]) -> str:
    if len(values) == 1:
        return f'{values[0]:.2f}'
    return f'{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}'


#: Fidelity columns of the table (DistillFidelity; the distilled stages, '-' for the others).
FIDELITY_COLUMNS = ('fidelity/mAP_vs_teacher', 'fidelity/label_agreement')


def fidelity_cell(runs: list[dict], key: str) -> str:
    values = [r.get('fidelity', {}).get('test', {}).get(key) for r in runs]
    return cell(values) if values and None not in values else '-'


def summarise(results: dict[str, list[dict]]) -> str:
    from terminaltables import AsciiTable

    rows = [
        [
            'model',
            'test mAP',
            'test CF1 (thr 0.5)',
            'test OF1 (thr 0.5)',
            'val mAP',
            *(f'test {key}' for key in FIDELITY_COLUMNS),
            'wall time (s)',
            'CPU time (s)',
        ]
    ]
    for name, runs in results.items():
        if runs:
            timed = [r for r in runs if r['seconds'] is not None]
            cpu = [r['cpu_seconds'] for r in timed if 'cpu_seconds' in r]
            rows.append(
                [name]
                + [cell([r['test'][k] for r in runs]) for k in METRICS]
                + [
                    cell([r['val']['mAP'] for r in runs]),
                    *(fidelity_cell(runs, key) for key in FIDELITY_COLUMNS),
                    cell([r['seconds'] for r in timed]) if timed else 'given',
                    cell(cpu) if cpu else '-',
                ]
            )
    seeds = max(len(runs) for runs in results.values())
    title = f'MultiDigits test split, {seeds} seed(s)' + (' (mean ± std)' if seeds > 1 else '')
    return AsciiTable(rows, title=title).table


def plot(results: dict[str, list[dict]], path: str, **policy) -> None:
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    names = [n for n, runs in results.items() if runs]
    fig, ax = plt.subplots(figsize=(1.2 + 1.1 * len(names), 3.6))
    for i, name in enumerate(names):
        values = [r['test']['mAP'] for r in results[name]]
        mean = statistics.mean(values)
        std = statistics.stdev(values) if len(values) > 1 else 0.0
        ax.bar(i, mean, color='#9ecae1' if name != 'teacher' else '#bdbdbd', yerr=std, capsize=4)
        ax.scatter([i] * len(values), values, color='black', s=12, zorder=3)
        ax.text(i, mean, f'{mean:.1f}', ha='center', va='bottom', fontsize=8)
    ax.set_xticks(range(len(names)), names)
    ax.set_ylabel('test mAP (%)')
    low = min(r['test']['mAP'] for n in names for r in results[n])
    ax.set_ylim(max(0.0, low - 5.0), 100.0)
    ax.set_title('MultiDigits: bars mean ± std, dots seeds', fontsize=10)
    fig.tight_layout()
    save_figure(fig, path, dpi=120, **policy)
    plt.close(fig)


def run_stage(job: dict) -> dict:
    """Train (or, with ``job['given']``, evaluate) one stage of one seed and store its
    ``result.json``; runs in the demo's process (``--jobs 1``) or in a worker process.

    ``job``: ``name``, ``seed``, ``root`` (the demo's work dir), ``teacher`` (checkpoint),
    ``given``, ``options``, ``protocol``, ``verbose``, ``overwrite``, ``progress``.
    """
    work_dir = osp.join(job['root'], f'seed{job["seed"]}', job['name'])
    label = f'[seed {job["seed"]}] {job["name"]:9s}'
    cfg = stage_config(job['name'], work_dir, job['seed'], job['teacher'], job['options'])
    if job['given'] is None:
        result = train_and_evaluate(
            cfg,
            label,
            test=True,
            verbose=job['verbose'],
            progress=job['progress'],
            overwrite=job['overwrite'],
        )
    else:
        result = evaluate_checkpoint(cfg, job['given'], label, verbose=job['verbose'])
    result.update(seed=job['seed'], protocol=job['protocol'])
    write_json_atomic(osp.join(work_dir, 'result.json'), result)
    return result


def cache_epochs(stages: list[str], options: dict | None) -> int:
    """How many epochs of teacher outputs the distilled ``stages`` read: the most any trains."""
    return max(
        load_config(osp.join(ROOT, STAGES[name]), options).train_cfg.max_epochs for name in stages
    )


def fill_seed_cache(job: dict) -> str:
    """Run the teacher once over the training batches of some epochs of one seed and store its
    outputs in the seed's teacher cache, which that seed's distilled stages then read
    (bit-identically to a live teacher, docs/teacher_cache.md). Several processes fill disjoint
    epochs of one cache at once (the cache locks its manifest). The cache is filled with the
    outputs of the stage that reads the most of them (L2D also reads the label embeddings), so
    every stage finds its own.

    ``job``: ``seed``, ``root``, ``teacher``, ``options``, ``stages`` (the distilled ones),
    ``epochs`` (the epoch numbers this task fills). Returns the cache folder.
    """
    from cache_teacher import fill_cache
    from mmengine.registry import DefaultScope

    from mlkd.registry import MODELS

    seed_dir = osp.join(job['root'], f'seed{job["seed"]}')
    configs = {
        name: stage_config(
            name, osp.join(seed_dir, name), job['seed'], job['teacher'], job['options']
        )
        for name in job['stages']
    }
    outputs = {}
    with DefaultScope.overwrite_default_scope('mlkd'):
        for name, cfg in configs.items():
            model_cfg = dict(
                cfg.model.to_dict(),
                teacher_cache=None,
                teacher_ckpt=None,
                allow_random_teacher=True,
            )  # only the taps are wanted here
            outputs[name] = set(MODELS.build(model_cfg).teacher_outputs)
    widest = max(outputs, key=lambda name: len(outputs[name]))
    missing = {
        name: sorted(taps - outputs[widest])
        for name, taps in outputs.items()
        if not taps <= outputs[widest]
    }
    if missing:
        raise SystemExit(
            f'demo.py: no single stage reads every teacher output the others read '
            f'({missing} are not read by {widest}); one teacher cache cannot serve '
            'them all'
        )
    cfg = configs[widest]
    fill_cache(cfg, teacher_cache_dir(seed_dir), job['epochs'], log=lambda text: None)
    return teacher_cache_dir(seed_dir)


def single_thread_worker() -> None:
    """Every stage computes on one thread, whatever ``--jobs``: the float sums then run in one
    order and a stage gives the same bits alone or beside others."""
    import torch

    torch.set_num_threads(1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--work-dir', default='work_dirs/demo')
    parser.add_argument(
        '--seeds',
        type=int,
        nargs='+',
        default=[0],
        help='distinct non-negative seeds; the first one trains the teacher. A '
        "seed sets the data order and augmentation (the configs' seed_key); "
        'every run starts from the same initialisation',
    )
    parser.add_argument('--stages', nargs='+', default=DEFAULT_STAGES, choices=list(STAGES))
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
        'dir and replace results.json and demo.png (never deleting other '
        'files)',
    )
    parser.add_argument(
        '--cfg-options',
        nargs='+',
        action=DictAction,
        default={},
        help='config overrides applied to every stage (e.g. a shorter run)',
    )
    parser.add_argument(
        '--jobs',
        type=int,
        default=os.cpu_count() or 1,
        help='stages trained side by side, one process and one thread each '
        '(default: the number of CPU cores); every stage gives the same result '
        'whatever the number',
    )
    parser.add_argument('--verbose', action='store_true', help='show the training logs')
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f'--jobs must be at least 1, got {args.jobs}')

    if any(seed < 0 for seed in args.seeds):
        parser.error(f'--seeds must be non-negative, got {args.seeds}')
    if len(set(args.seeds)) != len(args.seeds):
        parser.error(f'--seeds lists a seed twice: {args.seeds}')
    if len(set(args.stages)) != len(args.stages):
        parser.error(f'--stages lists a stage twice: {args.stages}')
    if args.resume and args.overwrite:
        parser.error('--resume reuses finished stages and --overwrite retrains them: pick one')
    students = [s for s in args.stages if s != 'teacher']
    teacher_ckpt = args.teacher_ckpt
    if teacher_ckpt is None and 'teacher' not in args.stages and students != ['student']:
        parser.error('distilled stages need a teacher: add the teacher stage or --teacher-ckpt')

    # Every check below happens before any training.
    protocol = protocol_of(args.stages, args.seeds, args.cfg_options, args.work_dir, teacher_ckpt)
    stored = sorted(glob.glob(osp.join(args.work_dir, 'seed*', '*', 'result.json')))
    for path in [osp.join(args.work_dir, 'results.json')] + stored:
        if osp.isfile(path):
            with open(path, encoding='utf-8') as f:
                try:
                    found = json.load(f)
                except ValueError:  # not ours: the output policy below refuses to replace it
                    continue
            check_protocol(
                found.get('protocol', {}) if isinstance(found, dict) else {}, protocol, path
            )
    planned = [
        osp.join(args.work_dir, f'seed{seed}', name, 'result.json')
        for seed in args.seeds
        for name in students
    ]
    if 'teacher' in args.stages:
        planned.append(osp.join(args.work_dir, f'seed{args.seeds[0]}', 'teacher', 'result.json'))
    done = [p for p in planned if osp.isfile(p)]
    if done and not (args.resume or args.overwrite):
        parser.error(
            f'{len(done)} stage(s) of this call are already finished in '
            f'{args.work_dir} (e.g. {done[0]}): pass --resume to reuse them or '
            '--overwrite to retrain them'
        )
    total = time.perf_counter()
    outputs = [osp.join(args.work_dir, name) for name in ('demo.png', 'results.json')]
    # What an earlier call left is replaced only with --overwrite; --resume reuses its finished
    # stages (of the same config) and summarises them again in demo.png and results.json.
    policy = dict(overwrite=args.overwrite or args.resume, inputs=[args.teacher_ckpt])
    if not args.resume:
        check_outputs(
            outputs
            + [
                osp.join(args.work_dir, f'seed{seed}', name, 'result.json')
                for seed in args.seeds
                for name in args.stages
            ],
            **policy,
        )

    common = dict(root=args.work_dir, options=args.cfg_options)
    order = []  # tasks (kind, stage or cache shard, seed) in the order one process runs them
    if 'teacher' in args.stages:
        order.append(('stage', 'teacher', args.seeds[0]))
    distilled = [name for name in students if name != 'student']
    # A seed's cache is filled by `shards` tasks side by side, shard k with epochs k, k + shards...
    epochs = cache_epochs(distilled, args.cfg_options) if distilled else 0
    # Without fcntl (Windows) a cache takes one writer process (teacher_cache's module doc).
    shards = max(min(args.jobs, epochs), 1) if cache_format.fcntl is not None else 1
    for seed in args.seeds:  # the seed's teacher cache is filled before its distilled stages
        for name in students:
            if name in distilled and ('cache', 0, seed) not in order:
                order.extend(('cache', shard, seed) for shard in range(shards))
            order.append(('stage', name, seed))
    finished = {}  # task key -> result
    for kind, name, seed in order:
        done_file = osp.join(args.work_dir, f'seed{seed}', str(name), 'result.json')
        if kind == 'stage' and args.resume and osp.isfile(done_file):  # protocol checked above
            with open(done_file, encoding='utf-8') as f:
                finished[(kind, name, seed)] = json.load(f)
            print(f'[seed {seed}] {name}: reused {done_file}', flush=True)
    # A seed whose distilled stages are all reused needs no teacher outputs.
    todo = [
        key
        for key in order
        if key not in finished
        and not (
            key[0] == 'cache' and all(('stage', name, key[2]) in finished for name in distilled)
        )
    ]
    teacher_key = ('stage', 'teacher', args.seeds[0])

    def ready(key: tuple) -> bool:
        kind, name, seed = key
        if kind == 'cache' or name in distilled:
            if teacher_key in order and teacher_key not in finished:
                return False
        if kind == 'stage' and name in distilled:
            return all(
                ('cache', shard, seed) in finished or ('cache', shard, seed) not in todo
                for shard in range(shards)
            )
        return True

    def shard_epochs(shard: int) -> list[int]:
        return list(range(shard, epochs, shards))

    def cache_task(shard: int) -> str:
        return 'teacher outputs' + (f' (shard {shard + 1} of {shards})' if shards > 1 else '')

    def job_of(key: tuple) -> tuple:
        kind, name, seed = key
        teacher = finished[teacher_key]['checkpoint'] if teacher_key in finished else teacher_ckpt
        if kind == 'cache':
            return fill_seed_cache, dict(
                common, seed=seed, teacher=teacher, stages=distilled, epochs=shard_epochs(name)
            )
        return run_stage, dict(
            common,
            name=name,
            seed=seed,
            teacher=teacher,
            given=teacher_ckpt if name == 'teacher' else None,
            protocol=protocol,
            verbose=args.verbose,
            overwrite=args.overwrite,
            progress=workers <= 1,
        )

    def report(key: tuple, value, seconds: float) -> None:
        kind, name, seed = key
        finished[key] = value
        if kind == 'cache':
            print(
                f'[seed {seed}] {cache_task(name)} cached in {value} ({seconds:.0f} s)', flush=True
            )
            return
        took = (
            'given'
            if value['seconds'] is None
            else f'{value["seconds"]:.0f} s wall, '
            f'{value.get("cpu_seconds", float("nan")):.0f} s CPU'
        )
        print(
            f'[seed {seed}] {name}: test '
            + '  '.join(f'{k} {v:.2f}' for k, v in value['test'].items())
            + f'  ({took})',
            flush=True,
        )

    workers = min(args.jobs, max(len(todo), 1))
    if workers <= 1:  # in this process, one stage after the other, with a progress line
        single_thread_worker()
        for key in todo:
            function, job = job_of(key)
            start = time.perf_counter()
            report(key, function(job), time.perf_counter() - start)
    else:  # stages side by side, one thread each; the progress is one line per start and end
        context = multiprocessing.get_context('spawn')
        pending, running = list(todo), {}
        with ProcessPoolExecutor(
            workers, mp_context=context, initializer=single_thread_worker
        ) as pool:
            while pending or running:
                if not running and not any(ready(k) for k in pending):
                    raise RuntimeError(f'demo.py: tasks {pending} wait for tasks that never ran')
                for key in [k for k in pending if ready(k)][: workers - len(running)]:
                    pending.remove(key)
                    function, job = job_of(key)
                    running[pool.submit(function, job)] = (key, time.perf_counter())
                    what = (
                        f'caching the {cache_task(key[1])}, epochs {shard_epochs(key[1])}'
                        if key[0] == 'cache'
                        else key[1]
                    )
                    print(
                        f'[seed {key[2]}] {what}: started ({len(finished)} of {len(order)} '
                        f'tasks done, {time.perf_counter() - total:.0f} s)',
                        flush=True,
                    )
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    key, start = running.pop(future)
                    report(key, future.result(), time.perf_counter() - start)
    results = {
        name: [
            finished[('stage', name, seed)]
            for seed in (args.seeds[:1] if name == 'teacher' else args.seeds)
        ]
        for name in args.stages
    }
    teacher_ckpt = results['teacher'][0]['checkpoint'] if 'teacher' in args.stages else teacher_ckpt
    print(summarise(results))
    plot(results, outputs[0], **policy)
    summary = dict(
        seeds=args.seeds,
        stages=args.stages,
        protocol=protocol,
        teacher_ckpt=teacher_ckpt,
        results=results,
    )
    validate_results(summary)
    check_outputs(outputs[1:], **policy)
    write_json_atomic(outputs[1], summary)
    print(
        f'total wall time: {time.perf_counter() - total:.0f} s; '
        f'bar chart: {osp.join(args.work_dir, "demo.png")}'
    )


if __name__ == '__main__':
    main()
