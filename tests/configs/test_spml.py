"""Single-positive configs on MultiDigits: each builds and trains; per-sample state survives resume;
the heatmap tool runs on a tiny SCL run."""

import csv
import glob
import math
import os.path as osp

import numpy as np
import pytest
import torch
from conftest import (
    SMALL_TOOL_RUN,
    TWO_AUGMENTED_BATCHES,
    assert_same_state,
    config_path,
    run_tool,
    small_run_cfg,
    whole_and_resumed_runs,
)

from mlkd.engine import build_runner

CONFIGS = sorted(osp.basename(p) for p in glob.glob(config_path('spml', '*_multidigits.py')))
PARTIAL = sorted(osp.basename(p) for p in glob.glob(config_path('spml', 'partial', '*.py')))


def test_every_single_positive_method_has_a_config():
    assert CONFIGS == sorted(
        f'{m}_multidigits.py'
        for m in ('an', 'an_ls', 'wan', 'epr', 'role', 'em', 'en', 'cl', 'scl', 'full_labels')
    )
    assert PARTIAL == sorted(
        f'{m}_partial{f}_multidigits.py' for m in ('an', 'en', 'scl') for f in (75, 40)
    )


@pytest.mark.parametrize('fraction', [75, 40])
def test_partial_label_configs_observe_the_fraction_and_evaluate_on_full_held_out_labels(fraction):
    from mmengine.config import Config
    from mmengine.registry import DefaultScope

    from mlkd.datasets.observed_labels import label_lists_to_matrix
    from mlkd.registry import DATASETS

    cfg = Config.fromfile(config_path('spml', 'partial', f'an_partial{fraction}_multidigits.py'))
    with DefaultScope.overwrite_default_scope('mlkd'):
        splits = {
            split: DATASETS.build(cfg[f'{split}_dataloader'].dataset)
            for split in ('train', 'val', 'test')
        }
    train = splits['train']
    infos = [train.get_data_info(i) for i in range(len(train))]
    observed = label_lists_to_matrix([i['gt_label'] for i in infos], 10)
    full = label_lists_to_matrix([i['gt_label_full'] for i in infos], 10)
    expected = np.maximum(1, np.floor(fraction / 100 * full.sum(1) + 0.5))
    assert (observed <= full).all() and (observed.sum(1) == expected).all()
    # every mosaic the config asks for is kept (no image is dropped for its labels)
    assert len(train) == cfg.train_dataloader.dataset.num_samples
    for split in ('val', 'test'):  # held-out scans, clean label sets
        data = splits[split]
        assert data.split == split and len(data) == cfg[f'{split}_dataloader'].dataset.num_samples
        assert all('gt_label_ignored' not in data.get_data_info(i) for i in range(5))


@pytest.mark.parametrize('name', CONFIGS)
def test_config_builds_and_takes_steps(name, tmp_path):
    cfg = small_run_cfg(config_path('spml', name), str(tmp_path), epochs=1, **TWO_AUGMENTED_BATCHES)
    runner = build_runner(cfg)
    runner.train()
    assert runner.iter == 2
    for loss in cfg.model.losses:
        value = runner.message_hub.get_scalar(f'train/loss_{loss}').current()
        assert math.isfinite(value), loss
    assert runner.message_hub.get_scalar('train/loss_cls').current() == 0  # AN etc. replace it
    model = runner.model
    for loss in model.losses.values():
        if hasattr(loss, 'seen'):
            assert loss.seen.sum() == 32  # every training image visited
        if hasattr(loss, 'known'):
            assert loss.known[:32].any(dim=(1, 2)).all() and not loss.known[32:].any()


@pytest.fixture(scope='module')
def resume_runs(tmp_path_factory):
    """``resume_runs(method)``: 2 epochs of the method's config (48 samples, augmentation), and
    the same run killed after epoch 1 and resumed (made once per module)."""
    made = {}

    def runs(method):
        if method not in made:
            config = config_path('spml', f'{method}_multidigits.py')
            made[method] = whole_and_resumed_runs(
                lambda work, epochs: small_run_cfg(
                    config,
                    work,
                    epochs=epochs,
                    train_samples=48,
                    val_samples=16,
                    batch_size=16,
                    augment=True,
                ),
                tmp_path_factory.mktemp(f'resume_{method}'),
            )
        return made[method]

    return runs


@pytest.mark.parametrize('method', ['role', 'scl'])  # parameter + buffer; host store
def test_resume_keeps_the_per_sample_state(method, resume_runs):
    whole, resumed = resume_runs(method)
    assert resumed.iter == whole.iter == 6
    assert_same_state(resumed.model, whole.model, atol=0)
    state = resumed.model.state_dict()
    key = {'role': 'losses.role.label_logits', 'scl': 'losses.scl.heatmaps'}[method]
    assert key in state and state[key][:48].float().abs().sum() > 0


def test_heatmap_overlays_tool_on_a_tiny_scl_run(resume_runs, tmp_path):
    """The tool on the last checkpoint of the SCL run above (48 training images, 2 epochs)."""
    config = config_path('spml', 'scl_multidigits.py')
    work, out = resume_runs('scl')[0].work_dir, str(tmp_path / 'overlays')
    logs = glob.glob(osp.join(work, '*', '*.log'))
    assert (
        logs
        and 'SpatialConsistencyLoss: heatmap store 1500 images x 10 classes x 8x8 uint8'
        in open(logs[0]).read()
    )
    ckpt = osp.join(work, 'epoch_2.pth')
    run = run_tool(
        'tools/visualization/heatmap_overlays.py',
        config,
        ckpt,
        '--out-dir',
        out,
        '--indices',
        '0',
        '3',
        '--top-k',
        '3',
        '--cfg-options',
        *SMALL_TOOL_RUN,
        'train_dataloader.dataset.num_samples=48',
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert osp.getsize(osp.join(out, 'heatmap_overlays.png')) > 1000
    with open(osp.join(out, 'heatmap_overlays.csv')) as f:
        rows = list(csv.DictReader(f))
    assert [(int(r['sample_idx']), int(r['rank'])) for r in rows] == [
        (i, k) for i in (0, 3) for k in (1, 2, 3)
    ]
    from mlkd.utils.compat import load_local_checkpoint

    heatmaps = load_local_checkpoint(ckpt, map_location='cpu')['state_dict']['losses.scl.heatmaps']
    for r in rows:  # the table reports the stored maps
        stored = heatmaps[int(r['sample_idx']), int(r['cls'])].float() / 255
        assert float(r['heatmap_max']) == pytest.approx(float(stored.max()), abs=1e-4)
    assert sum(r['observed'] == 'True' for r in rows) <= 2  # one annotated positive each
    from mmengine.config import Config

    from mlkd.datasets.multidigits import MultiDigits

    train = Config.fromfile(config).train_dataloader.dataset.to_dict()  # the run's training set
    train.pop('type')
    data = MultiDigits(**{**train, 'num_samples': 48, 'pipeline': []})
    for r in rows:  # the true column is the clean label set of that training image
        truth = int(r['cls']) in data.get_data_info(int(r['sample_idx']))['gt_label_full']
        assert r['true'] == str(truth)


def test_results_tool_averages_test_metrics_over_seeds(tmp_path):
    """tools/analysis_tools/spml_results.py reads each run's tools/test.py result and last val
    mAP."""
    import json

    from conftest import run_tool

    for seed, (test_map, val_map) in enumerate([(60.0, 61.0), (70.0, 71.0)]):
        # Both namings: after the row (an_seed0) and after the config file, as the README's
        # commands name them (an_multidigits_seed1).
        work = tmp_path / (f'an_seed{seed}' if seed == 0 else f'an_multidigits_seed{seed}')
        (work / 'test' / '20260101_000000').mkdir(parents=True)
        (work / '20260101_000000' / 'vis_data').mkdir(parents=True)
        (work / 'test' / '20260101_000000' / '20260101_000000.json').write_text(
            json.dumps({'mAP': test_map, 'CF1_oracle': 50.0 + seed, 'OF1_oracle': 40.0})
        )
        (work / '20260101_000000' / 'vis_data' / 'scalars.json').write_text(
            json.dumps({'loss': 1.0, 'step': 1}) + '\n' + json.dumps({'mAP': val_map}) + '\n'
        )
    (tmp_path / 'en_seed0').mkdir()  # no test result: left out
    run = run_tool(
        'tools/analysis_tools/spml_results.py', str(tmp_path), '--out', str(tmp_path / 'results')
    )
    assert run.returncode == 0, run.stderr[-2000:]
    rows = [line for line in run.stdout.splitlines() if line.startswith('| single positive')]
    assert rows == [
        '| single positive | AN | `an_multidigits.py` | 0,1 | 65.00 ± 7.07 | '
        '50.50 ± 0.71 | 40.00 ± 0.00 | 66.00 ± 7.07 |'
    ]
    assert osp.getsize(tmp_path / 'results.png') > 1000


# The network's class maps either average-pooled behind a neck (the config's) or max-pooled by a
# ClassMapHead without one.
MAP_HEAD = {
    '+model.classifier.neck': None,  # the classifier comes by cfg_path: no neck key to check
    'model.classifier.head.type': 'ClassMapHead',
    'model.classifier.head.pooling': 'max',
}


@pytest.mark.parametrize('head_options', [{}, MAP_HEAD], ids=['pooling_neck', 'map_head'])
def test_scl_diagnostics_tool_reads_a_store_against_the_digit_cells(tmp_path, head_options):
    """A checkpoint whose store holds 1 exactly in the cells of each digit's class and 0 elsewhere:
    the tool must report in-cell 1, elsewhere 0, absent 0, every cell known, and the loss terms
    with their gradients."""
    from mmengine.registry import init_default_scope

    from mlkd.registry import DATASETS, MODELS
    from mlkd.utils.cli import load_config

    config = config_path('spml', 'scl_multidigits.py')
    options = ['train_dataloader.dataset.num_samples=16', 'model.losses.scl.num_samples=16']
    options += [f'{key}={value}' for key, value in head_options.items()]
    from mlkd.models.losses import SpatialConsistencyLoss

    cfg = load_config(config, head_options)
    cfg.train_dataloader.dataset.num_samples = cfg.model.losses.scl.num_samples = 16
    init_default_scope('mlkd')
    model = MODELS.build(dict(cfg.model, data_preprocessor=cfg.data_preprocessor))
    data = DATASETS.build(cfg.train_dataloader.dataset)
    scl = next(m for m in model.modules() if isinstance(m, SpatialConsistencyLoss))
    for n in range(16):
        cells = np.array(data.get_data_info(n)['cell_labels']).reshape(2, 2)
        for row in range(2):
            for col in range(2):
                if cells[row, col] >= 0:
                    scl.heatmaps[
                        n, cells[row, col], 4 * row : 4 * row + 4, 4 * col : 4 * col + 4
                    ] = 255
    scl.known[:] = True
    ckpt = str(tmp_path / 'store.pth')
    torch.save({'state_dict': model.state_dict()}, ckpt)

    def diagnostics(*flags):
        # A new output per call: the tools never replace an existing file without --overwrite.
        out = str(tmp_path / f'table_{len(list(tmp_path.glob("table_*.md")))}.md')
        run = run_tool(
            'tools/analysis_tools/scl_diagnostics.py',
            config,
            ckpt,
            '--num-images',
            '16',
            '--num-batches',
            '1',
            '--batch-size',
            '8',
            '--out',
            out,
            *flags,
            '--cfg-options',
            *options,
        )
        assert run.returncode == 0, run.stderr[-3000:]
        with open(out) as f:
            return {
                line.split('|')[1].strip(): line.split('|')[2].strip()
                for line in f.read().splitlines()[2:]
            }

    table = diagnostics()
    assert (
        table['store_in_cell'],
        table['store_elsewhere'],
        table['store_absent'],
        table['known'],
    ) == ('1', '0', '0', '1')
    # With the store overwritten by the (untrained, near-constant) network's own maps, the SCL
    # target is the network's (eval-mode) view: the term shrinks against the 0 / 1 digit store.
    refreshed = diagnostics('--refresh-store')
    assert refreshed['store_in_cell'] == '1'  # the checkpoint's store, read first
    assert float(refreshed['loss_scl']) < 0.2 * float(table['loss_scl'])
    assert float(table['loss_scl']) > 0 and float(table['loss_scl grad_norm backbone']) > 0
    assert float(table['loss_en grad_norm head']) > 0 and 'loss_cls' not in table
    assert -1 <= float(table['cos loss_en loss_scl head']) <= 1
