"""Two teachers of partial label sets and different architectures through the Runner: the shipped
config configs/multi_teacher/l2d_resnet_and_timm_teachers.py (the demo's ResNet on digits 0-6,
timm's resnet18 on digits 3-9) trains, and each teacher's cache is exact and its own.

Tiny data (32 training samples, the shipped augmentation keyed by (seed, epoch, index), two steps),
``label_targets='best_val_ap'``: a run with the live teachers that writes one cache per teacher
(``TeacherCacheHook``; a writing run trains on the live outputs) and a run reading them without
running either teacher — the second teacher's cache filled again by ``fill_teacher_cache``
(what ``tools/cache_teacher.py --teacher high`` runs) — end with the same weights bit for bit and
log the same losses (tests/engine/test_teacher_cache_runs.py compares a plain live run with a
writing run for one teacher). Each cache's manifest holds its own teacher's
weights, and one teacher's cache is refused for the other. The per-label validation AP the runs
chose the teachers by is checked against scikit-learn's on the teachers' own logits.
"""

import json
import os.path as osp

import numpy as np
import pytest
import torch
from conftest import (
    TWO_AUGMENTED_BATCHES,
    cheap_default_init,
    config_path,
    logged_losses,
    small_run_cfg,
)
from mmengine.dataset import pseudo_collate
from mmengine.hooks import Hook
from mmengine.registry import DefaultScope
from sklearn.metrics import average_precision_score

from mlkd.apis import fill_teacher_cache
from mlkd.engine import build_runner
from mlkd.models.builder import build_network
from mlkd.teacher_cache import TeacherCacheError, TeacherOutputCache, teacher_weights_sha256

CONFIG = config_path('multi_teacher', 'l2d_resnet_and_timm_teachers.py')
TEACHERS = {'low': 'teacher_digits0to6.py', 'high': 'timm_teacher_digits3to9.py'}


@pytest.fixture(scope='module')
def teacher_files(tmp_path_factory):
    """Each teacher, randomly initialised, saved as mlkd saves a classifier."""
    root = tmp_path_factory.mktemp('multi_teachers')
    files = {}
    torch.manual_seed(0)
    for name, config in TEACHERS.items():
        with DefaultScope.overwrite_default_scope('mlkd'), cheap_default_init():
            net = build_network(config_path('multi_teacher', config), name)
        files[name] = str(root / f'{name}.pth')
        torch.save({'state_dict': net.state_dict()}, files[name])
    return files


def _cfg(work_dir, teacher_files, caches=None):
    cfg = small_run_cfg(CONFIG, work_dir, epochs=1, **TWO_AUGMENTED_BATCHES)
    cfg.model.label_targets = 'best_val_ap'
    cfg.randomness = dict(seed=7)
    cfg.default_hooks.checkpoint = None  # the runs are compared in memory
    for loader in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        cfg[loader].dataset.serialize_data = False
    # What is tested is not the log's copy of the config: yapf takes seconds to format this one.
    super(type(cfg), cfg).__setattr__('_format_python_code', False)
    for name, path in teacher_files.items():
        cfg.model.teachers[name].ckpt = path
        cfg.model.teachers[name].cache = dict(
            dict(dir=None, mode=None), **(caches or {}).get(name, {})
        )
    return cfg


@pytest.fixture(scope='module')
def runs(tmp_path_factory, teacher_files):
    root = tmp_path_factory.mktemp('multi_teacher_runs')
    caches = {name: str(root / f'cache_{name}') for name in TEACHERS}
    made = {}
    writing = {name: dict(dir=folder, mode='write') for name, folder in caches.items()}
    made['write'] = build_runner(_cfg(str(root / 'write'), teacher_files, writing))
    made['write'].train()
    # The second teacher's cache once more, by the cache tool's function, into another folder.
    tool_cache = str(root / 'tool_cache_high')
    fill_teacher_cache(
        _cfg(str(root / 'tool'), teacher_files), tool_cache, 1, teacher='high', log=lambda _: None
    )
    reading = dict(low=dict(dir=caches['low'], mode='read'), high=dict(dir=tool_cache, mode='read'))
    made['read'] = build_runner(_cfg(str(root / 'read'), teacher_files, reading))
    made['training_teacher_calls'] = calls = []
    epoch = []

    class EpochFlag(Hook):  # TeacherEvalHook runs the teachers on val before training
        def before_train_epoch(self, runner):
            epoch.append(True)

    made['read'].register_hook(EpochFlag())
    for teacher in made['read'].model.teachers.values():
        teacher.register_forward_hook(lambda *args: calls.append(bool(epoch)))
    made['read'].train()
    return made, caches


def test_per_teacher_caches_train_bit_identically_to_the_live_teachers(runs):
    made, _ = runs
    live = made['write'].model.state_dict()
    assert live['label_teacher'].min() >= 0  # every class went to a teacher before training
    state = made['read'].model.state_dict()
    assert state.keys() == live.keys()
    for key, value in live.items():
        assert torch.equal(state[key], value), f'{key} differs'
    losses = logged_losses(made['write'].work_dir)
    assert len(losses) == 2 and {'loss_low_mld', 'loss_high_led_cd'} <= set(losses[0])
    assert logged_losses(made['read'].work_dir) == losses
    calls = made['training_teacher_calls']
    assert calls and True not in calls  # the teachers ran on val only, never in a training step


def test_each_cache_holds_its_own_teacher_and_refuses_the_other(runs):
    made, caches = runs
    model = made['write'].model
    manifests = {
        name: json.load(open(osp.join(folder, 'manifest.json'))) for name, folder in caches.items()
    }
    for name, manifest in manifests.items():
        expected = teacher_weights_sha256(model.teachers[name])
        assert manifest['fingerprint']['teacher_weights_sha256'] == expected
        assert sorted(manifest['taps']) == ['t_label_emb', 't_logits']
    low, high = (manifests[n]['fingerprint'] for n in ('low', 'high'))
    assert low['teacher_weights_sha256'] != high['teacher_weights_sha256']
    assert {k: v for k, v in low.items() if 'weights' not in k} == {
        k: v for k, v in high.items() if 'weights' not in k
    }
    cache = TeacherOutputCache(caches['low'], 'read')
    with pytest.raises(TeacherCacheError, match='teacher_weights_sha256 differs'):
        cache.open(high, ['t_logits'])


def test_the_teachers_are_chosen_by_their_validation_ap_per_label(runs):
    made, _ = runs
    runner = made['write']
    record = json.load(open(osp.join(runner.work_dir, 'teacher_label_ap.json')))
    model, loader = runner.model, runner.val_dataloader
    dataset = loader.dataset
    batch = model.data_preprocessor(pseudo_collate([dataset[i] for i in range(len(dataset))]))
    labels = np.zeros((len(dataset), 10), dtype=int)
    for row, sample in enumerate(batch['data_samples']):
        labels[row, sample.gt_label.tolist()] = 1
    for name, teacher in model.teachers.items():
        with torch.no_grad():
            logits = teacher(batch['inputs'], mode='tensor').numpy()
        classes = model.label_sets[name].classes
        for column, label in enumerate(record['classes']):
            ap = record['ap'][name][column]
            if label not in classes or not labels[:, column].any():
                assert ap is None, (name, label)
                continue
            expected = average_precision_score(labels[:, column], logits[:, classes.index(label)])
            assert ap == pytest.approx(expected, abs=1e-9), (name, label)
    choice = record['target_from']
    assert choice[:3] == ['low'] * 3 and choice[7:] == ['high'] * 3
    ap = record['ap']
    for column in range(3, 7):  # shared digits: the better teacher, ties to the first
        low, high = (ap[n][column] if ap[n][column] is not None else -1 for n in ('low', 'high'))
        assert choice[column] == ('low' if low >= high else 'high')
    assert model.label_choice() == choice


def test_fidelity_without_a_teacher_of_every_class_is_refused_before_training(
    tmp_path, teacher_files
):
    """The shipped teachers know digits 0-6 and 3-9: DistillFidelity (one teacher's scores of every
    class) has no teacher to compare with, and TeacherScoreHook says so before the first step."""
    cfg = _cfg(str(tmp_path), teacher_files)
    cfg.val_evaluator = [cfg.val_evaluator[0], dict(type='DistillFidelity')]
    runner = build_runner(cfg)
    steps = []
    runner.model.register_forward_pre_hook(lambda *args: steps.append(1))
    with pytest.raises(ValueError, match=r"val_evaluator holds \['DistillFidelity'\].*2 teachers"):
        runner.train()
    assert steps == [] and runner.iter == 0
