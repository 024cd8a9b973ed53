"""The output policy (mlkd/utils/output_policy.py) holds for every tool that writes files: an
existing output is refused without --overwrite (the error names the path and the flag) and left
as it was; an output that is one of the tool's inputs is refused even with --overwrite.

Each tool runs in-process and is refused before its real work starts, so the inputs are small
stand-ins (a config that inherits a shipped one, an empty checkpoint file, a tiny score dump).
"""

import json
import os
import os.path as osp
import shutil

import numpy as np
import pytest
from conftest import REPO, config_path, load_tool

from mlkd.utils.output_policy import OutputExistsError, OutputIsInputError

PRECIOUS = 'precious: written before the tool ran\n'


def _inputs(tmp_path) -> dict[str, str]:
    """Stand-in inputs: a config, a checkpoint file, a score dump, a work dir with a log."""
    config = tmp_path / 'in' / 'config.py'
    config.parent.mkdir()
    config.write_text(f'_base_ = [{config_path("multidigits", "resnet_student.py")!r}]\n')
    checkpoint = tmp_path / 'in' / 'model.pth'
    checkpoint.write_bytes(b'not read: the tool stops first')
    dump = tmp_path / 'in' / 'scores.npz'
    np.savez(dump, scores=np.random.rand(4, 3), labels=np.eye(4, 3), sample_idx=np.arange(4))
    run = tmp_path / 'in' / 'runs' / 'a' / '20260101_000000' / 'vis_data'
    run.mkdir(parents=True)
    (run / 'scalars.json').write_text(json.dumps(dict(loss=1.0, iter=1, epoch=1, step=1)) + '\n')
    results = tmp_path / 'in' / 'results.md'  # demo_paired's input, named as its .md output
    results.write_text('{}')
    return dict(
        config=str(config),
        checkpoint=str(checkpoint),
        dump=str(dump),
        results=str(results),
        results_stem=str(results)[:-3],
        runs=str(tmp_path / 'in' / 'runs'),
        scalars=str(run / 'scalars.json'),
    )


def _case(command, output=None, onto_input=None):
    """A row of CASES from a command line (the tool, then its arguments): ``output`` defaults to
    the last argument; ``onto_input`` is the input placeholder that replaces the last argument to
    write onto an input, or the whole argument list that does so where more differs."""
    tool, *args = command.split()
    if onto_input is not None:
        onto_input = onto_input.split()
        onto_input = args[:-1] + onto_input if len(onto_input) == 1 else onto_input
    return tool, args, output or args[-1], onto_input


#: (tool, argv with {placeholders}, the output refused when it exists, argv that writes onto an
#: input instead, or None where every input is a folder or the output name is fixed)
CASES = {
    'collect_results': _case('analysis_tools/collect_results {runs} --out {o}/t.md', '{o}/t.csv'),
    'per_class_ap --out': _case(
        'analysis_tools/per_class_ap {dump} --out {o}/ap.png', onto_input='{dump}'
    ),
    'per_class_ap --csv': _case(
        'analysis_tools/per_class_ap {dump} --out {o}/ap.png --csv {o}/ap.csv', onto_input='{dump}'
    ),
    'analyze_logs plot_curve': _case(
        'analysis_tools/analyze_logs plot_curve {runs}/a --out {o}/c.png',
        '{o}/c.csv',
        onto_input='plot_curve {scalars} --out {scalars}',
    ),
    'top_scores': _case('analysis_tools/top_scores {dump} --out-dir {o}', '{o}/top_scores.png'),
    'map_by_object_size': _case(
        'analysis_tools/map_by_object_size {dump} {config} --out-dir {o}',
        '{o}/map_by_object_size.md',
    ),
    'intra_class_diagnostics': _case(
        'analysis_tools/intra_class_diagnostics {config} --teachers 0={checkpoint} --out-dir {o}',
        '{o}/intra_class_diagnostics.csv',
    ),
    'scl_diagnostics': _case(
        'analysis_tools/scl_diagnostics {config} {checkpoint} --out {o}/scl.md',
        onto_input='{config}',
    ),
    'expected_negative_stats': _case(
        'analysis_tools/expected_negative_stats {config} {checkpoint} --out {o}/en.md',
        onto_input='{checkpoint}',
    ),
    'linear_probe': _case(
        'analysis_tools/linear_probe {config} {checkpoint} --dataset imagefolder --data-root {runs}'
        ' --out-dir {o} --save-features',
        '{o}/linear_probe_imagefolder.features.npz',
    ),
    'teacher_score_stats': _case(
        'analysis_tools/teacher_score_stats {config} {checkpoint} --out-dir {o}',
        '{o}/teacher_score_stats.png',
    ),
    'spml_results': _case('analysis_tools/spml_results {runs} --out {o}/spml', '{o}/spml.png'),
    'sweep': _case(
        'analysis_tools/sweep {config} --x train_cfg.max_epochs 1 --y train_cfg.val_interval 1'
        ' --work-dir {o}',
        '{o}/sweep.md',
    ),
    'heatmap_overlays': _case(
        'visualization/heatmap_overlays {config} {checkpoint} --out-dir {o}',
        '{o}/heatmap_overlays.md',
    ),
    'browse_dataset': _case(
        'visualization/browse_dataset {config} --out {o}/b.png', onto_input='{config}'
    ),
    'print_config': _case('misc/print_config {config} --out {o}/r.py', onto_input='{config}'),
    'test --out': _case('test {config} {checkpoint} --out {o}/s.npz', onto_input='{checkpoint}'),
    'export_student': _case(
        'export_student {checkpoint} {o}/student.pth', onto_input='{checkpoint}'
    ),
    'demo': _case('demo --stages student --work-dir {o}', '{o}/results.json'),
    'demo_paired': _case(
        'analysis_tools/demo_paired {results} --out {o}/paired',
        '{o}/paired.png',
        onto_input='{results_stem}',
    ),
    'intra_class_study': _case(
        'analysis_tools/intra_class_study --out-dir {o} --work-dir {o}/runs',
        '{o}/intra_class_study.md',
    ),
    'study': _case(
        'analysis_tools/study {config} --work-dir {o}/runs --out {o}/r.json',
        '{o}/r.json',
        onto_input='{config} --work-dir {o}/runs --reuse {results} --out {results}',
    ),
    'pretrain': _case(
        'pretrain --names multiglyphs_student_backbone --work-dir {o}',
        '{o}/multiglyphs_student_backbone.pth',
    ),
    'infer': _case('infer {config} --checkpoint {checkpoint} {runs} --out {o}/l.jsonl'),
    'pytorch2onnx': _case(
        'deployment/pytorch2onnx {config} {checkpoint} --out {o}/m.onnx', onto_input='{checkpoint}'
    ),
    'calibrate_thresholds': _case(
        'analysis_tools/calibrate_thresholds {config} {checkpoint} --out {o}/t.json',
        onto_input='{config}',
    ),
    'benchmark_inference': _case('benchmarks/benchmark_inference --out {o}/b.json'),
    'gpu_check': _case('benchmarks/gpu_check --device cpu --out {o}/g.json'),
    'benchmark_train_throughput': _case(
        'benchmarks/benchmark_train_throughput --tiny --out {o}/t.json'
    ),
}


@pytest.fixture
def from_repo_root(monkeypatch):
    """The tools run from the repository root, as the README runs them."""
    monkeypatch.chdir(REPO)


def _fill(args, paths):
    return [a.format(**paths) for a in args]


@pytest.mark.parametrize('case', list(CASES))
def test_an_existing_output_is_refused_without_overwrite(case, tmp_path, from_repo_root):
    tool, args, output, _ = CASES[case]
    paths = dict(_inputs(tmp_path), o=str(tmp_path / 'out'))
    output = output.format(**paths)
    os.makedirs(osp.dirname(output), exist_ok=True)
    with open(output, 'w') as file:
        file.write(PRECIOUS)
    before = sorted(os.listdir(osp.dirname(output)))
    with pytest.raises(OutputExistsError) as error:
        load_tool(tool).main(_fill(args, paths))
    assert str(error.value) == f'output {output!r} exists; pass --overwrite to replace it'
    with open(output) as file:
        assert file.read() == PRECIOUS
    assert sorted(os.listdir(osp.dirname(output))) == before  # nothing else written there


@pytest.mark.parametrize('case', [c for c, v in CASES.items() if v[3] is not None])
def test_an_output_onto_an_input_is_refused_even_with_overwrite(case, tmp_path, from_repo_root):
    tool, _, _, args = CASES[case]
    paths = dict(_inputs(tmp_path), o=str(tmp_path / 'out'))
    snapshot = {p: open(p, 'rb').read() for p in paths.values() if osp.isfile(p)}
    with pytest.raises(OutputIsInputError, match='is one of the inputs'):
        load_tool(tool).main(_fill(args, paths) + ['--overwrite'])
    for path, data in snapshot.items():
        assert open(path, 'rb').read() == data, path


def test_every_tool_that_writes_files_is_covered():
    """A new tool with an output flag must be added to CASES (and docs/bad_inputs.md)."""
    writers = set()
    for folder, _, files in os.walk(osp.join(REPO, 'tools')):
        for name in files:
            if name.endswith('.py'):
                text = open(osp.join(folder, name), encoding='utf-8').read()
                if any(f in text for f in ("'--out", "'out'", 'savefig', "'--work-dir'")):
                    writers.add(osp.relpath(osp.join(folder, name), osp.join(REPO, 'tools'))[:-3])
    covered = {tool for tool, *_ in CASES.values()}
    # train.py: the work-dir rule (tests/utils/test_work_dir.py); render_reproduction leaves an
    # output with the same text alone and refuses other text without --overwrite, returning 1
    # (tests/tools/test_render_reproduction.py), then writes through the policy.
    assert writers - covered == {'train', 'misc/render_reproduction'}


def test_overwrite_replaces_atomically(tmp_path, from_repo_root):
    """With --overwrite the tool writes: print_config's output is the resolved config."""
    paths = dict(_inputs(tmp_path), o=str(tmp_path / 'out'))
    out = tmp_path / 'out' / 'r.py'
    out.parent.mkdir()
    out.write_text(PRECIOUS)
    load_tool('misc/print_config').main([paths['config'], '--out', str(out), '--overwrite'])
    assert 'train_cfg' in out.read_text() and PRECIOUS not in out.read_text()
    assert os.listdir(out.parent) == ['r.py']  # no temporary file left


def test_collect_results_refuses_to_average_runs_of_different_settings(tmp_path, from_repo_root):
    """Two runs of one config name that differ in more than the seed are not seeds."""
    collect = load_tool('analysis_tools/collect_results')
    runs = tmp_path / 'runs'
    for name, seed, epochs in (('s0', 0, 3), ('s1', 1, 3), ('other', 2, 9)):
        work_dir = runs / name
        (work_dir / '20260101_000000' / 'vis_data').mkdir(parents=True)
        (work_dir / '20260101_000000' / 'vis_data' / 'scalars.json').write_text(
            json.dumps(dict(mAP=50.0 + seed, step=1)) + '\n'
        )
        (work_dir / 'student.py').write_text(
            f'model = dict(type="X")\nrandomness = dict(seed={seed})\n'
            f'train_cfg = dict(max_epochs={epochs})\nwork_dir = {str(work_dir)!r}\n'
        )
    collect.main([str(runs / 's0'), str(runs / 's1')])  # seeds of one setting: fine
    with pytest.raises(ValueError) as error:
        collect.main([str(runs)])
    assert 'differ in more than the seed' in str(error.value)
    assert 'train_cfg.max_epochs: ' in str(error.value) and '--allow-mixed' in str(error.value)
    collect.main([str(runs), '--allow-mixed'])
    shutil.rmtree(runs)
