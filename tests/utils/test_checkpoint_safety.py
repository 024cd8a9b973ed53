"""Checkpoints load with ``weights_only=True``: code pickled into a file never runs.

A checkpoint carrying an ``os.system`` payload is refused, naming the file and the global, by
every way a user opens one (tools/test.py, tools/train.py --resume, a distiller's teacher_ckpt);
mlkd's own checkpoints (classifier, distiller with AMP loss scaler and student EMA, resumed runs,
exported students, plain state dicts) load without unpickling anything else; a trusted file is
loaded in full only when the user opts in.
"""

import io
import os
import os.path as osp
import pickle
import random
from collections import OrderedDict
from fractions import Fraction

import numpy as np
import pytest
import torch
from conftest import (
    MULTIDIGITS_3D,
    MULTIDIGITS_STUDENT,
    SMALL_TOOL_RUN,
    assert_same_nested,
    load_tool,
    run_tool,
    small_run_cfg,
)
from mmengine.logging import HistoryBuffer
from mmengine.runner.checkpoint import CheckpointLoader

from mlkd.engine import build_runner
from mlkd.utils import checkpoint as checkpoint_module
from mlkd.utils.checkpoint import (
    TRUST_ENV,
    InvalidCheckpointError,
    UnsafeCheckpointError,
    load_local_checkpoint,
    trust_checkpoint,
)

FULL_UNPICKLE_WARNING = 'unpickling it in full'
SYSTEM = f'{os.system.__module__}.system'  # how pickle names os.system: posix.system on Linux


class _ShellPayload:
    """Unpickling this runs a shell command (what a malicious checkpoint would carry)."""

    def __init__(self, command: str):
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


class _ExecPayload(_ShellPayload):
    def __reduce__(self):
        return exec, (self.command,)


def _with_extra(source: str, target: str, **extra) -> str:
    """A copy of checkpoint ``source`` with ``extra`` objects added to its ``meta``."""
    checkpoint = load_local_checkpoint(source, map_location='cpu')
    checkpoint['meta'] = {**checkpoint.get('meta', {}), **extra}
    torch.save(checkpoint, target)
    return target


@pytest.fixture(scope='module')
def runs(tmp_path_factory, student_run, multidigits_teacher_ckpt):
    """Real checkpoints written by the Runner: two classifiers (the session's shared ML-Decoder
    teacher and student runs), a float16-AMP distiller with student EMA trained one epoch, then
    resumed to two by tools/train.py, its exported student, plain state dicts.

    Each training is one iteration per epoch (the float16 distiller's batch is 8): that already
    writes every piece of state these checks read (weights, Adam moments, the AMP loss scaler,
    the EMA copy, the message hub, RNG states), and the payload checks only need some real
    checkpoint file.
    """
    root = str(tmp_path_factory.mktemp('runs'))
    teacher = multidigits_teacher_ckpt  # configs/multidigits/mldecoder_teacher.py; read only

    def distiller_cfg():
        cfg = small_run_cfg(
            MULTIDIGITS_3D,
            osp.join(root, 'distiller'),
            epochs=1,
            # one batch of 8: float16 convolutions are slow on a CPU, and the state the checks
            # read is the same whatever the batch
            train_samples=8,
            val_samples=8,
            batch_size=8,
            schedule_epochs=2,
        )
        cfg.model.teacher_ckpt = teacher
        cfg.optim_wrapper.update(type='MixedPrecisionOptimWrapper', dtype='float16')
        cfg.custom_hooks = list(cfg.custom_hooks) + [
            dict(type='StudentEMAHook', momentum=0.5, priority='ABOVE_NORMAL')
        ]
        return cfg

    build_runner(distiller_cfg()).train()
    # Resumed by the tool as a user would, with torch forced to weights-only loading everywhere.
    resume = run_tool(
        'tools/train.py',
        MULTIDIGITS_3D,
        '--resume',
        osp.join(root, 'distiller', 'epoch_1.pth'),
        '--amp',
        '--work-dir',
        osp.join(root, 'distiller'),
        '--cfg-options',
        *SMALL_TOOL_RUN,
        'train_cfg.max_epochs=2',
        'train_dataloader.dataset.num_samples=8',
        'train_dataloader.batch_size=8',
        'val_dataloader.dataset.num_samples=8',
        'optim_wrapper.dtype=float16',
        f'model.teacher_ckpt={teacher}',
        env={'TORCH_FORCE_WEIGHTS_ONLY_LOAD': '1'},
    )
    assert resume.returncode == 0, resume.stderr[-3000:]

    paths = {
        'teacher': teacher,
        'classifier': student_run['checkpoint'],
        'distiller_amp_ema': osp.join(root, 'distiller', 'epoch_1.pth'),
        'distiller_resumed': osp.join(root, 'distiller', 'epoch_2.pth'),
        'exported_student': osp.join(root, 'student.pth'),
        'plain_state_dict': osp.join(root, 'plain.pth'),
        'mmpretrain_style': osp.join(root, 'mmpretrain_style.pth'),
        'resume_log': resume.stdout + resume.stderr,
    }
    load_tool('export_student').export_student(
        paths['distiller_resumed'], paths['exported_student']
    )
    weights = torch.load(paths['exported_student'], weights_only=True)['state_dict']
    torch.save(OrderedDict(weights), paths['plain_state_dict'])
    torch.save(
        {
            'meta': {'mmpretrain_version': '1.2.0', 'dataset_meta': {'classes': ('a', 'b')}},
            'state_dict': weights,
        },
        paths['mmpretrain_style'],
    )
    return paths


@pytest.mark.parametrize(
    'kind',
    [
        'teacher',
        'classifier',
        'distiller_amp_ema',
        'distiller_resumed',
        'exported_student',
        'plain_state_dict',
        'mmpretrain_style',
    ],
)
def test_own_checkpoints_load_weights_only(runs, kind, monkeypatch):
    calls = []
    real_load = torch.load
    monkeypatch.setattr(torch, 'load', lambda *a, **kw: calls.append(kw) or real_load(*a, **kw))
    loaded = CheckpointLoader.load_checkpoint(runs[kind], map_location='cpu')
    assert [kw['weights_only'] for kw in calls] == [True]
    monkeypatch.undo()
    assert_same_nested(loaded, torch.load(runs[kind], map_location='cpu', weights_only=False))
    if kind.startswith('distiller'):
        scaler = loaded['optimizer']['loss_scaler']
        assert scaler['scale'] > 0 and isinstance(scaler['_growth_tracker'], int)
        assert loaded['rng_state']['numpy'][1].dtype == np.uint32
        assert isinstance(loaded['message_hub']['log_scalars']['train/loss'], HistoryBuffer)
    if kind == 'distiller_amp_ema':
        assert any(k.startswith('module.') for k in loaded['ema_state_dict'])
    if kind == 'distiller_resumed':
        assert loaded['meta']['epoch'] == 2


def _bad_copy(source: str, folder) -> tuple[str, str]:
    marker = str(folder / 'MARKER')
    bad = _with_extra(source, str(folder / 'BAD.pth'), note=_ShellPayload(f'touch {marker}'))
    return bad, marker


@pytest.mark.parametrize('tool', ['test', 'resume', 'teacher_ckpt'])
def test_the_tools_refuse_a_checkpoint_with_a_payload(runs, tool, tmp_path):
    bad, marker = _bad_copy(runs['teacher' if tool == 'teacher_ckpt' else 'classifier'], tmp_path)
    work = ['--work-dir', str(tmp_path / 'work')]
    if tool == 'test':
        out = run_tool(
            'tools/test.py', MULTIDIGITS_STUDENT, bad, *work, '--cfg-options', *SMALL_TOOL_RUN
        )
    elif tool == 'resume':
        out = run_tool(
            'tools/train.py',
            MULTIDIGITS_STUDENT,
            '--resume',
            bad,
            *work,
            '--cfg-options',
            *SMALL_TOOL_RUN,
        )
    else:
        out = run_tool(
            'tools/train.py',
            MULTIDIGITS_3D,
            *work,
            '--cfg-options',
            *SMALL_TOOL_RUN,
            f'model.teacher_ckpt={bad}',
        )
    assert out.returncode != 0
    assert not osp.exists(marker), 'the pickled command ran'
    error = out.stderr.strip().splitlines()
    assert any(
        'UnsafeCheckpointError' in line and bad in line and SYSTEM in line for line in error
    ), out.stderr[-3000:]
    assert f'--trust-checkpoint {bad}' in out.stderr


@pytest.mark.parametrize('fmt', ['zip', 'legacy'])
def test_exec_and_system_payloads_are_refused_in_both_formats(runs, fmt, tmp_path):
    markers = [str(tmp_path / 'A'), str(tmp_path / 'B')]
    path = str(tmp_path / 'bad.pth')
    torch.save(
        {
            'state_dict': {'w': torch.ones(2)},
            'a': _ShellPayload(f'touch {markers[0]}'),
            'b': _ExecPayload(f'open({markers[1]!r}, "w").close()'),
        },
        path,
        _use_new_zipfile_serialization=fmt == 'zip',
    )
    with pytest.raises(UnsafeCheckpointError) as info:
        load_local_checkpoint(path)
    assert path in str(info.value)
    # The zip format lets torch list every global without unpickling; the legacy format stops
    # at the first one.
    expected = sorted([SYSTEM, 'builtins.exec']) if fmt == 'zip' else [SYSTEM]
    assert f'needs {", ".join(expected)}, which' in str(info.value)
    assert not any(osp.exists(m) for m in markers)


def test_getattr_reaches_only_the_allowed_methods(tmp_path):
    """Allowed: the statistics methods a HistoryBuffer pickles; refused: anything else."""

    class Escape:
        def __reduce__(self):
            return getattr, (HistoryBuffer, '__init__')

    path = str(tmp_path / 'getattr.pth')
    torch.save({'buffer': HistoryBuffer([1.0], [1]), 'escape': Escape()}, path)
    with pytest.raises(UnsafeCheckpointError, match=r"getattr\(HistoryBuffer, '__init__'\)"):
        load_local_checkpoint(path)
    torch.save({'buffer': HistoryBuffer([1.0, 3.0], [1, 1])}, path)
    assert load_local_checkpoint(path)['buffer'].mean() == 2.0


# Random bytes from a fixed seed: test ids must be the same in every pytest-xdist process.
@pytest.mark.parametrize(
    'content,message',
    [
        (random.Random(0).randbytes(4096), 'is not a PyTorch checkpoint'),
        (b'epoch: 3\nlr: 0.1\n', 'is not a PyTorch checkpoint'),
        (pickle.dumps({'state_dict': {}}), 'is not a PyTorch checkpoint'),
        (b'', 'is an empty file'),
        ('first half', 'is truncated or damaged'),
        ('legacy first half', 'is truncated or damaged'),
    ],
    ids=['random_bytes', 'yaml_text', 'pickle', 'empty', 'first_half', 'legacy_first_half'],
)
def test_a_file_that_is_not_a_checkpoint_is_named(runs, tmp_path, content, message):
    if content in ('first half', 'legacy first half'):
        buffer = io.BytesIO()
        torch.save(
            load_local_checkpoint(runs['classifier']),
            buffer,
            _use_new_zipfile_serialization=content == 'first half',
        )
        content = buffer.getvalue()[: len(buffer.getvalue()) // 2]
    path = str(tmp_path / 'x.pth')
    with open(path, 'wb') as file:
        file.write(content)
    with pytest.raises(InvalidCheckpointError, match=message) as info:
        CheckpointLoader.load_checkpoint(path, map_location='cpu')
    assert repr(path) in str(info.value)


def test_opt_in_loads_a_trusted_file_needing_an_extra_global(runs, tmp_path, monkeypatch):
    monkeypatch.setattr(checkpoint_module, '_trusted_paths', set())
    monkeypatch.delenv(TRUST_ENV, raising=False)
    trusted = _with_extra(runs['classifier'], str(tmp_path / 'trusted.pth'), ratio=Fraction(1, 3))
    other = _with_extra(runs['classifier'], str(tmp_path / 'other.pth'), ratio=Fraction(2, 3))
    with pytest.raises(UnsafeCheckpointError, match=r'needs fractions\.Fraction, which'):
        load_local_checkpoint(trusted)

    monkeypatch.setenv(TRUST_ENV, os.pathsep.join(['/nowhere.pth', trusted]))
    assert load_local_checkpoint(trusted)['meta']['ratio'] == Fraction(1, 3)
    with pytest.raises(UnsafeCheckpointError, match='other.pth'):
        load_local_checkpoint(other)  # trusting one file trusts no other
    monkeypatch.setenv(TRUST_ENV, '1')
    assert load_local_checkpoint(other)['meta']['ratio'] == Fraction(2, 3)

    monkeypatch.delenv(TRUST_ENV)
    trust_checkpoint(other)
    assert load_local_checkpoint(other)['meta']['ratio'] == Fraction(2, 3)
    with pytest.raises(UnsafeCheckpointError):
        load_local_checkpoint(trusted)
    with pytest.raises(FileNotFoundError, match='typo.pth'):
        trust_checkpoint(str(tmp_path / 'typo.pth'))


def test_test_tool_opt_in_flag(runs, tmp_path):
    trusted = _with_extra(runs['classifier'], str(tmp_path / 'trusted.pth'), ratio=Fraction(1, 3))
    out = run_tool(
        'tools/test.py',
        MULTIDIGITS_STUDENT,
        trusted,
        '--work-dir',
        str(tmp_path / 'work'),
        '--trust-checkpoint',
        trusted,
        '--cfg-options',
        *SMALL_TOOL_RUN,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert FULL_UNPICKLE_WARNING in out.stdout + out.stderr
    assert 'fractions.Fraction' in out.stdout + out.stderr


def test_tools_read_own_checkpoints_weights_only(runs, tmp_path):
    """train.py --resume of the AMP distiller (in the fixture) and test.py on the resumed
    checkpoint (its teacher_ckpt too), with torch forced to weights-only loading everywhere."""
    assert 'resumed epoch: 1' in runs['resume_log']
    assert FULL_UNPICKLE_WARNING not in runs['resume_log']
    env = {'TORCH_FORCE_WEIGHTS_ONLY_LOAD': '1'}
    out = run_tool(
        'tools/test.py',
        MULTIDIGITS_3D,
        runs['distiller_resumed'],
        '--work-dir',
        str(tmp_path / 'test'),
        '--cfg-options',
        *SMALL_TOOL_RUN,
        f'model.teacher_ckpt={runs["teacher"]}',
        env=env,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    log = out.stdout + out.stderr
    assert f'Loaded checkpoint {runs["distiller_resumed"]}' in log
    assert FULL_UNPICKLE_WARNING not in log


def test_test_tool_refuses_a_checkpoint_of_another_model(runs, tmp_path):
    """The ML-Decoder teacher's checkpoint evaluated with the ResNet student's config: mmengine
    warned and reported metrics of a partly random model; now it stops."""
    out = run_tool(
        'tools/test.py',
        MULTIDIGITS_STUDENT,
        runs['teacher'],
        '--work-dir',
        str(tmp_path),
        '--cfg-options',
        *SMALL_TOOL_RUN,
    )
    assert out.returncode != 0
    error = out.stderr[out.stderr.find('CheckpointMismatchError') :]
    assert f"checkpoint '{runs['teacher']}' does not fit the model" in error, out.stderr[-3000:]
    assert 'unexpected key in source state_dict' in error and 'load_strict=False' in error


# --- safe writes --------------------------------------------------------------------------------


def _crash_part_way(real_save, when):
    """A torch.save that, for objects where ``when(obj)``, writes half the bytes and raises."""

    def save(obj, file, *args, **kwargs):
        if not when(obj):
            return real_save(obj, file, *args, **kwargs)
        buffer = io.BytesIO()
        real_save(obj, buffer)
        file.write(buffer.getvalue()[: len(buffer.getvalue()) // 2])
        raise OSError('simulated crash while saving')

    return save


def test_a_crash_while_saving_leaves_no_truncated_checkpoint(tmp_work_dir, monkeypatch):
    """The disk fills up (here: a file-size limit of half the checkpoint) while MLKDRunner writes
    epoch 2's checkpoint over an older file of that name: the run fails, the older file and the
    checkpoint of epoch 1 are intact, no temporary file is left. (mmengine's Runner truncates the
    destination first, then writes.)"""
    import resource
    import signal

    cfg = small_run_cfg(
        MULTIDIGITS_STUDENT, tmp_work_dir, epochs=2, train_samples=32, val_samples=16
    )
    # A file left by an earlier run in the same work dir, about to be replaced.
    old_epoch_2 = osp.join(tmp_work_dir, 'epoch_2.pth')
    torch.save({'state_dict': {'w': torch.ones(3)}}, old_epoch_2)
    with open(old_epoch_2, 'rb') as file:
        old_bytes = file.read()
    epoch_1_bytes = []
    real_save = torch.save
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)

    def save(obj, file, *args, **kwargs):
        real_save(obj, file, *args, **kwargs)
        if isinstance(obj, dict) and obj.get('meta', {}).get('epoch') == 2:
            with open(osp.join(tmp_work_dir, 'epoch_1.pth'), 'rb') as previous:
                epoch_1_bytes.append(previous.read())
            size = file.tell() if hasattr(file, 'tell') else osp.getsize(file)
            resource.setrlimit(resource.RLIMIT_FSIZE, (size // 2, hard))

    monkeypatch.setattr(torch, 'save', save)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failing write, not a killed process
    try:
        with pytest.raises(OSError):
            build_runner(cfg).train()
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)
    monkeypatch.undo()
    assert epoch_1_bytes, 'the run did not reach the save of epoch 2'
    with open(old_epoch_2, 'rb') as file:
        assert file.read() == old_bytes  # not truncated, not half-replaced
    with open(osp.join(tmp_work_dir, 'epoch_1.pth'), 'rb') as file:
        assert [file.read()] == epoch_1_bytes  # the previous checkpoint is intact
    assert load_local_checkpoint(osp.join(tmp_work_dir, 'epoch_1.pth'))['meta']['epoch'] == 1
    assert not [name for name in os.listdir(tmp_work_dir) if name.endswith('.tmp')]


def test_export_protects_its_input_and_existing_files(runs, tmp_path):
    export = load_tool('export_student')
    source = str(tmp_path / 'distiller.pth')
    with open(runs['distiller_resumed'], 'rb') as file:
        source_bytes = file.read()
    with open(source, 'wb') as file:
        file.write(source_bytes)
    with pytest.raises(ValueError, match=r"output '.*distiller\.pth' is one of the inputs"):
        export.export_student(source, source, overwrite=True)
    os.link(source, str(tmp_path / 'hardlink.pth'))  # the same file under another name
    with pytest.raises(ValueError, match='is one of the inputs'):
        export.export_student(source, str(tmp_path / 'hardlink.pth'), overwrite=True)
    with open(source, 'rb') as file:
        assert file.read() == source_bytes

    existing = str(tmp_path / 'student.pth')
    with open(existing, 'wb') as file:
        file.write(b'keep me')
    with pytest.raises(FileExistsError, match=r"'.*student\.pth' exists; pass --overwrite"):
        export.export_student(source, existing)
    with open(existing, 'rb') as file:
        assert file.read() == b'keep me'
    export.export_student(source, existing, overwrite=True)
    assert torch.load(existing, weights_only=True)['meta']['epoch'] == 2

    not_a_folder = str(tmp_path / 'student.pth' / 'out.pth')  # its parent is a file
    with pytest.raises(OSError, match=r"cannot write '.*student\.pth/out\.pth'"):
        export.export_student(source, not_a_folder)


def test_export_crash_keeps_the_previous_output(runs, tmp_path, monkeypatch):
    export = load_tool('export_student')
    out = str(tmp_path / 'student.pth')
    export.export_student(runs['distiller_resumed'], out)
    with open(out, 'rb') as file:
        before = file.read()
    monkeypatch.setattr(torch, 'save', _crash_part_way(torch.save, lambda obj: True))
    with pytest.raises(OSError, match='simulated crash'):
        export.export_student(runs['distiller_resumed'], out, overwrite=True)
    with open(out, 'rb') as file:
        assert file.read() == before
    assert os.listdir(tmp_path) == ['student.pth']


def test_score_dump_is_written_completely_or_not_at_all(tmp_path, monkeypatch):
    from mlkd.evaluation.metrics import DumpScores

    out = str(tmp_path / 'scores.npz')
    metric = DumpScores(out_file=out)
    results = [(torch.tensor([0.2, 0.9]), torch.tensor([0, 1]), i) for i in range(3)]
    metric.compute_metrics(results)
    with open(out, 'rb') as file:
        before = file.read()

    def crash(file, **arrays):
        file.write(b'PK\x03\x04 half an archive')
        raise OSError('simulated crash while saving')

    monkeypatch.setattr(np, 'savez', crash)
    with pytest.raises(OSError, match='simulated crash'):
        metric.compute_metrics(results[:1])
    with open(out, 'rb') as file:
        assert file.read() == before
    assert os.listdir(tmp_path) == ['scores.npz']
    assert np.load(out)['scores'].shape == (3, 2)
