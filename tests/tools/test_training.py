"""End-to-end runs on MultiDigits: resume equivalence, clear start-up errors, tools."""

import functools
import glob
import os.path as osp

import pytest
from conftest import (
    MULTIDIGITS_3D,
    MULTIDIGITS_STUDENT,
    SMALL_TOOL_RUN,
    TINY_TOOL_DATA,
    TOOL_RUN_CONFIG,
    TWO_AUGMENTED_BATCHES,
    assert_same_nested,
    assert_same_run_state,
    config_path,
    run_tool,
    small_run_cfg,
    whole_and_resumed_runs,
)

from mlkd.engine import build_runner
from mlkd.utils.checkpoint import load_local_checkpoint


def _train(cfg):
    runner = build_runner(cfg)
    runner.train()
    return runner


#: A resume restores the run's state (data order, augmentation, optimizer, schedulers, the RNGs
#: of dropout): configs that differ only in their network's width, head or library have the same.
#: So the matrix is one shipped MultiDigits classifier config per recipe and head kind, and a
#: distiller. Left out: the teachers whose student twin has the same recipe and head with a
#: narrower network (the ResNet and ML-Decoder teachers: ``_base_`` is the student's, widths
#: changed) and the timm teacher (the timm student checks the timm path); the ML-Decoder student
#: (the timm student has the same recipe and ML-Decoder head, dropout included); and the ResNet
#: student, which ``test_train_tool_resume_equals_uninterrupted_run`` resumes through
#: tools/train.py with the shipped loaders. About 75 s of the suite's time that checked nothing
#: the others do not.
SAME_STATE_AS_A_TWIN = {
    'mldecoder_teacher.py',
    'resnet_teacher.py',
    'resnet_teacher_single_label.py',
    'timm_resnet18_mldecoder_teacher.py',
    'mldecoder_student.py',
    'resnet_student.py',
}
SHIPPED_CONFIGS = [
    *sorted(
        path
        for path in glob.glob(config_path('multidigits', '*.py'))
        if osp.basename(path) not in SAME_STATE_AS_A_TWIN
    ),
    MULTIDIGITS_3D,
]


def _shipped_run_cfg(config, work_dir, epochs):
    """``config`` as shipped (augmentation, 2 persistent workers per loader), tiny data, no
    validation (it runs after the last checkpoint, so it cannot affect what is compared)."""
    cfg = small_run_cfg(config, work_dir, epochs=epochs, num_workers=None, **TWO_AUGMENTED_BATCHES)
    cfg.train_cfg.val_interval = epochs + 1
    if 'teacher_ckpt' in cfg.model:
        # a random teacher, the same in every run (same seed)
        cfg.model.teacher_ckpt, cfg.model.allow_random_teacher = None, True
    return cfg


@pytest.mark.parametrize('config', SHIPPED_CONFIGS, ids=osp.basename)
def test_resumed_run_equals_uninterrupted_run(config, tmp_path):
    """A run killed after epoch 1 and resumed to 2 equals the uninterrupted 2 epochs bit for bit,
    with the shipped loaders. One resumed epoch is enough: everything the checkpoint must carry
    (optimizer, schedulers mid-cycle, generators, sampler epoch) is used in it, and the whole
    run's second epoch reuses its persistent workers while the resumed run starts new ones."""
    whole, resumed = whole_and_resumed_runs(functools.partial(_shipped_run_cfg, config), tmp_path)
    loader = whole.train_dataloader
    assert (loader.num_workers, loader.persistent_workers) == (2, True)
    assert resumed.epoch == whole.epoch == 2
    assert_same_run_state(resumed, whole)


@pytest.fixture(scope='module')
def train_tool_runs(tmp_path_factory):
    """tools/train.py as a user runs it (the shipped loaders, the 12-epoch schedule): 3 epochs
    in ``whole``, and in ``resumed`` a ``--resume`` from the whole run's epoch-2 checkpoint (a
    run killed after epoch 2; the shipped hook keeps the last two) to 3."""
    root = tmp_path_factory.mktemp('train_tool')
    whole, resumed = str(root / 'whole'), str(root / 'resumed')
    options = [
        'train_cfg.max_epochs=3',
        'randomness.seed=0',
        'train_dataloader.batch_size=16',
        *TINY_TOOL_DATA,
    ]
    for work_dir, resume in ((whole, []), (resumed, ['--resume', osp.join(whole, 'epoch_2.pth')])):
        out = run_tool(
            'tools/train.py',
            MULTIDIGITS_STUDENT,
            '--work-dir',
            work_dir,
            *resume,
            '--cfg-options',
            *options,
        )
        assert out.returncode == 0, out.stderr[-3000:]
    return {'whole': whole, 'resumed': resumed}


def test_train_tool_resume_equals_uninterrupted_run(train_tool_runs):
    """As a user runs it: 3 epochs, or 2 epochs then --resume to 3, of the 12-epoch schedule."""
    expected = load_local_checkpoint(osp.join(train_tool_runs['whole'], 'epoch_3.pth'))
    resumed = load_local_checkpoint(osp.join(train_tool_runs['resumed'], 'epoch_3.pth'))
    assert not osp.exists(osp.join(train_tool_runs['resumed'], 'epoch_2.pth'))  # it did resume
    for key in ('state_dict', 'optimizer', 'param_schedulers'):
        assert_same_nested(resumed[key], expected[key], key)


def test_head_num_classes_mismatch_fails_at_start(tmp_work_dir):
    cfg = small_run_cfg(MULTIDIGITS_STUDENT, tmp_work_dir, epochs=1)
    cfg.model.head.num_classes = 7
    # Through build_runner, as a run has it: the dataset is named, not MLKDRunner's wrapper.
    with pytest.raises(
        ValueError,
        match=r'model\.head\.num_classes = 7, but train_dataloader\.dataset \(MultiDigits\) has 10',
    ):
        _train(cfg)


def test_test_tool_reports_a_missing_checkpoint(tmp_path):
    out = run_tool('tools/test.py', MULTIDIGITS_STUDENT, str(tmp_path / 'missing.pth'))
    assert out.returncode != 0
    assert 'checkpoint file not found' in out.stderr and 'missing.pth' in out.stderr


def test_test_tool_evaluates_a_distillation_run_by_its_work_dir_without_its_teacher_file(
    tool_runs, tmp_path
):
    """What a user types after distilling: the distillation config and the run's work dir (its
    last checkpoint). The config's teacher_ckpt names a file that is not here (the teacher is in
    another work dir, or on another machine): the checkpoint holds the teacher, which is read
    from it."""
    work = tool_runs['seeds'][0]
    out = run_tool(
        'tools/test.py',
        TOOL_RUN_CONFIG,
        work,
        '--work-dir',
        str(tmp_path),
        '--cfg-options',
        *SMALL_TOOL_RUN,
        'model.teacher_ckpt=no/such/teacher',
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert f'Loaded checkpoint {osp.join(work, "epoch_2.pth")}' in out.stdout + out.stderr


def test_train_tool_reports_a_missing_resume_checkpoint(tmp_path):
    out = run_tool('tools/train.py', MULTIDIGITS_STUDENT, '--resume', str(tmp_path / 'gone.pth'))
    assert out.returncode != 0
    assert '--resume checkpoint not found' in out.stderr and 'gone.pth' in out.stderr


def test_train_then_test_tool_with_out_file(train_tool_runs, tmp_path):
    """A checkpoint tools/train.py wrote (the 3-epoch run above) is loaded by tools/test.py
    (torch >= 2.6), evaluated and dumped."""
    ckpt = osp.join(train_tool_runs['whole'], 'epoch_3.pth')
    dump = str(tmp_path / 'scores.npz')
    out = run_tool(
        'tools/test.py',
        MULTIDIGITS_STUDENT,
        ckpt,
        '--work-dir',
        train_tool_runs['whole'],
        '--out',
        dump,
        '--cfg-options',
        *SMALL_TOOL_RUN,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    log = out.stdout + out.stderr
    assert f'Loaded checkpoint {ckpt}' in log
    assert 'per-class AP' in out.stdout
    import numpy as np

    data = np.load(dump)
    assert data['scores'].shape == data['labels'].shape == (32, 10)
    assert set(np.unique(data['labels'])) <= {0.0, 1.0}


def test_test_tool_logs_beside_the_training_without_replacing_its_config_dump(monkeypatch):
    """Without --work-dir, tools/test.py logs into <the config's work dir>/test: in the work dir
    itself, mmengine's dump of the test-time config replaced the training's, which the results
    tools read (seed, settings)."""
    from conftest import load_tool

    test = load_tool('test')
    seen = {}

    def evaluate(cfg, checkpoint, teacher=None):
        seen['work_dir'] = cfg.work_dir
        raise SystemExit(0)

    monkeypatch.setattr(test, 'evaluate', evaluate)
    monkeypatch.setattr(test, 'resolve_checkpoint', lambda path: path)
    with pytest.raises(SystemExit):
        test.main([MULTIDIGITS_STUDENT, 'ckpt.pth'])
    assert seen['work_dir'] == osp.join('work_dirs', 'resnet_student', 'test')
