"""The bad-input corpus (docs/bad_inputs.md): each input fails or warns naming its culprit, and
nothing written before is lost."""

import glob
import os
import os.path as osp
import subprocess
import types

import pytest
import torch
from conftest import (
    MULTIDIGITS_3D,
    MULTIDIGITS_STUDENT,
    REPO,
    SMALL_TOOL_RUN,
    build_model,
    load_tool,
    run_tool,
    small_run_cfg,
    write_jpeg,
)
from mmengine.config import Config
from mmengine.hooks import Hook
from mmengine.registry import DefaultScope

from mlkd.engine import MLKDRunner, build_runner
from mlkd.engine.hooks import LabelCoverageHook, NonFiniteGuardHook
from mlkd.models.algorithms import DivergedTrainingError, NonFiniteTrainingError
from mlkd.registry import HOOKS, MODELS

# --- non-finite values --------------------------------------------------------------------------


@HOOKS.register_module(force=True)
class _PoisonHook(Hook):
    """Puts a NaN / inf into the run at a chosen point, as a diverging run would."""

    priority = 'VERY_HIGH'

    def __init__(self, what: str, at_iter: int) -> None:
        self.what, self.at_iter = what, at_iter
        self.snapshot = None

    def before_train_iter(self, runner, batch_idx, data_batch=None) -> None:
        if runner.iter != self.at_iter:
            return
        model = runner.model
        self.snapshot = {k: v.clone() for k, v in model.state_dict().items()}
        first = next(model.parameters())
        if self.what == 'loss':
            first.data.fill_(float('nan'))
        elif self.what in ('gradient', 'gradient_once'):
            handle = first.register_hook(lambda grad: grad * float('inf'))
            self.handle = handle
        elif self.what == 'learning_rate':  # far too high from here on, as with lr=1e6
            for group in runner.optim_wrapper.param_groups:
                group['lr'] = 1e6

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
        if runner.iter == self.at_iter and self.what == 'gradient_once':
            self.handle.remove()
        if runner.iter == self.at_iter and self.what == 'buffer':
            running_var = next(
                v for k, v in runner.model.state_dict().items() if k.endswith('running_var')
            )
            running_var.fill_(float('inf'))


def _poisoned_run(
    tmp_path, what: str, at_iter: int, epochs: int = 3, batch_size: int = 16, **optim
):
    """A MultiDigits classifier run of 2 iterations per epoch, keeping one checkpoint."""
    cfg = small_run_cfg(
        MULTIDIGITS_STUDENT,
        str(tmp_path / 'work'),
        epochs=epochs,
        train_samples=2 * batch_size,
        val_samples=16,
        batch_size=batch_size,
    )
    cfg.default_hooks.checkpoint = dict(type='CheckpointHook', interval=1, max_keep_ckpts=1)
    cfg.val_cfg = cfg.val_dataloader = cfg.val_evaluator = None
    cfg.optim_wrapper.update(optim)
    cfg.custom_hooks = list(cfg.custom_hooks) + [
        dict(type='_PoisonHook', what=what, at_iter=at_iter)
    ]
    runner = build_runner(cfg)
    poison = next(h for h in runner._hooks if isinstance(h, _PoisonHook))
    return runner, poison


def _all_finite(path: str) -> bool:
    state = torch.load(path, map_location='cpu', weights_only=False)['state_dict']
    return all(torch.isfinite(v).all() for v in state.values() if v.is_floating_point())


def _training_stops(runner, error: type, match: str | None = None) -> str:
    """Trains until ``error`` (matching ``match``) stops the run; returns its message."""
    with pytest.raises(error, match=match) as stopped:
        runner.train()
    return str(stopped.value)


def _assert_only_checkpoint(work_dir: str, name: str) -> None:
    """max_keep_ckpts=1: ``name`` is the one checkpoint left (none was written after it, none
    rotated it away) and its weights are finite."""
    assert sorted(p for p in os.listdir(work_dir) if p.endswith('.pth')) == [name]
    assert _all_finite(osp.join(work_dir, name))


def test_nan_loss_stops_training_naming_term_epoch_and_iteration(tmp_path):
    """Issue 11: a run whose loss turned NaN kept writing checkpoints, and rotation deleted the
    last good one. Iteration 5 is the first of epoch 3."""
    runner, _ = _poisoned_run(tmp_path, 'loss', at_iter=4)
    message = _training_stops(runner, NonFiniteTrainingError)
    assert 'non-finite loss at epoch 3, iteration 5 (1-based' in message, message
    assert "['loss']. Losses: loss=nan" in message  # mmpretrain's classifier has one term
    # Epoch 2, the last finite one, is kept; no NaN checkpoint was written.
    _assert_only_checkpoint(runner.work_dir, 'epoch_2.pth')


def test_non_finite_gradient_is_never_applied(tmp_path):
    runner, poison = _poisoned_run(tmp_path, 'gradient', at_iter=1, epochs=1)
    _training_stops(
        runner,
        NonFiniteTrainingError,
        r"non-finite gradient at epoch 1, iteration 2 .* in \['backbone\.conv1\.weight'\]",
    )
    # The parameters are those before the step (BN statistics move in the forward pass anyway).
    for key, value in runner.model.named_parameters():
        torch.testing.assert_close(value, poison.snapshot[key], rtol=0, atol=0, msg=key)


def test_fp16_overflow_steps_are_skipped_not_fatal(tmp_path):
    """With float16 loss scaling an inf gradient is a normal, skipped step."""
    runner, _ = _poisoned_run(
        tmp_path,
        'gradient_once',
        at_iter=0,
        epochs=1,
        batch_size=2,  # float16 convolutions are slow on CPU; the batch size changes nothing here
        type='MixedPrecisionOptimWrapper',
        dtype='float16',
    )
    runner.train()
    assert runner.iter == 2
    assert runner.optim_wrapper.loss_scaler.get_scale() < 2.0**16  # lowered once
    assert _all_finite(osp.join(runner.work_dir, 'epoch_1.pth'))


def test_non_finite_weights_are_never_checkpointed_nor_rotate_a_good_one_away(tmp_path):
    runner, _ = _poisoned_run(tmp_path, 'buffer', at_iter=3, epochs=2)
    _training_stops(
        runner,
        NonFiniteTrainingError,
        'non-finite weights before saving a checkpoint .*running_var',
    )
    _assert_only_checkpoint(runner.work_dir, 'epoch_1.pth')


@pytest.mark.parametrize(
    'at_iter,message',
    [
        (
            2,
            r'diverging loss at epoch 2, iteration 4 \(1-based.*loss=.* is more than 10000 times '
            r'its level at the start of the run \(.*, the smallest of the first 10 iterations\)',
        ),
        # The last step before the epoch-2 checkpoint explodes: the weights are caught before it.
        (
            3,
            r'diverged weights before saving a checkpoint at epoch 2, iteration 4 .*: the norm of '
            r'the trainable weights grew from .* more than 1000 times',
        ),
    ],
    ids=['loss', 'weights_before_checkpoint'],
)
def test_a_diverging_run_stops_before_a_checkpoint_of_the_diverged_weights(
    tmp_path, at_iter, message
):
    """Issue 11: a learning rate of 1e6 trained on at loss 3e14, writing checkpoints. Two
    iterations per epoch; the learning rate becomes 1e6 at iteration ``at_iter`` (0-based)."""
    runner, _ = _poisoned_run(tmp_path, 'learning_rate', at_iter=at_iter)
    assert 'learning rate is likely too high' in _training_stops(
        runner, DivergedTrainingError, message
    )
    # Epoch 1's checkpoint is kept, none of the diverged weights written.
    _assert_only_checkpoint(runner.work_dir, 'epoch_1.pth')
    from mlkd.utils.checkpoint import load_local_checkpoint

    state = load_local_checkpoint(osp.join(runner.work_dir, 'epoch_1.pth'))['state_dict']
    assert max(float(v.abs().max()) for v in state.values() if v.is_floating_point()) < 1e3


def _random_distiller(**kwargs):
    cfg = Config.fromfile(MULTIDIGITS_3D).model
    cfg.update({'teacher_ckpt': None, 'allow_random_teacher': True, **kwargs})
    return build_model(cfg)


def test_teacher_with_nan_weights_fails_at_start_naming_the_file(tmp_path):
    model = _random_distiller()
    state = {k: v.clone() for k, v in model.teacher.state_dict().items()}
    key = next(k for k, v in state.items() if v.is_floating_point())
    state[key].view(-1)[0] = float('nan')
    path = str(tmp_path / 'teacher.pth')
    torch.save({'state_dict': state}, path)
    with pytest.raises(
        ValueError,
        match=rf"teacher: checkpoint '{path}' holds NaN or infinite "
        rf"weights in \['{key}'\]",
    ):
        _random_distiller(teacher_ckpt=path)


def test_teacher_with_non_finite_outputs_fails_before_the_first_step():
    model = _random_distiller()
    head_weights = [p for name, p in model.teacher.named_parameters() if name.startswith('head')]
    for weight in head_weights:
        weight.data.fill_(3e38)  # finite, but the logits overflow
    hook = NonFiniteGuardHook()
    with pytest.raises(NonFiniteTrainingError, match='non-finite outputs on a probe batch'):
        hook._check_teacher(model)


@pytest.mark.parametrize('bad', [float('nan'), float('inf'), -float('inf')])
def test_metrics_refuse_non_finite_scores(bad):
    from mlkd.evaluation.metrics.functional import (
        average_precision,
        multilabel_prf,
        sample_average_precision,
    )
    from mlkd.evaluation.metrics.multi_label import MultiLabelMetrics

    scores = torch.rand(4, 3)
    scores[2, 1] = bad
    targets = torch.tensor([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]])
    for metric in (average_precision, sample_average_precision, multilabel_prf):
        with pytest.raises(ValueError, match=r'\[sample, class\] = \[2, 1\]'):
            metric(scores, targets)
    records = [{'pred_score': s, 'target': t.to(torch.int8)} for s, t in zip(scores, targets)]
    with pytest.raises(ValueError, match='NaN or infinite'):
        MultiLabelMetrics().compute_metrics(records)


def test_export_refuses_a_student_with_nan_weights(tmp_path):
    export = load_tool('export_student')
    source = str(tmp_path / 'diverged.pth')
    torch.save(
        {
            'state_dict': {
                'student.w': torch.tensor([1.0, float('nan')]),
                'teacher.w': torch.ones(2),
            },
            'meta': {},
        },
        source,
    )
    before = open(source, 'rb').read()
    with pytest.raises(ValueError, match=r"student holds NaN or infinite weights in \['w'\]"):
        export.export_student(source, str(tmp_path / 'student.pth'))
    assert not osp.exists(tmp_path / 'student.pth')
    assert open(source, 'rb').read() == before


# --- misconfiguration ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    'option,message',
    [
        ('laod_from=x.pth', "'laod_from' is not a key .* did you mean load_from"),
        ('randomnes.seed=5', "'randomnes' is not a key .* did you mean randomness"),
        (
            'train_cfg.max_epoch=3',
            "train_cfg has no key 'max_epoch' and nothing reads such a key "
            'there; did you mean max_epochs',
        ),
        (
            'model.foo=1',
            "model has no key 'foo' and 'SingleTeacherDistiller' takes no such keyword "
            r'\(if something does read it, add it with \+model.foo\)',
        ),
        ('optim_wrapper.optimizer.lrr=0.1', "'Adam' takes no such keyword; did you mean lr"),
        ('optim_wrapper.dtype=float16', "optim_wrapper has no key 'dtype'"),  # OptimWrapper's
        (
            'custom_hooks.2.weight_growth_factr=1e3',
            "'NonFiniteGuardHook' takes no such keyword; did you mean weight_growth_factor",
        ),
        (
            'model.distill_losses.pd.temperatur=2',
            "'PositiveDivideLoss' takes no such keyword; did you mean temperature",
        ),
        (
            'train_dataloader.pin_memry=True',
            'nothing reads such a key there; did you mean pin_memory',
        ),
        ('model.studen.head.num_classes=3', "model has no key 'studen'; did you mean student"),
        # a dict of named entries left unset takes a first entry, a misspelled one does not
        ('model.student_tap.extra=backbone.layer1', "model has no key 'student_tap'"),
        ('model.student_taps.extra.x=backbone.layer1', "model has no key 'student_taps'"),
        ('model.head.num_classes=3', "model has no key 'head'"),
        ('custom_hooks.9.type=X', "custom_hooks is list, which has no '9'"),
    ],
)
def test_unknown_cfg_options_are_refused_with_a_suggestion(option, message):
    from mmengine.config import DictAction

    from mlkd.utils.cli import load_config

    key, value = option.split('=')
    with pytest.raises(KeyError, match=message):
        load_config(MULTIDIGITS_3D, {key: DictAction._parse_iterable(value)})


@pytest.mark.parametrize(
    'options,key,value',
    [
        # a keyword of the class the dict's type names, after the other options (AMP's dtype)
        (
            ['optim_wrapper.type=MixedPrecisionOptimWrapper', 'optim_wrapper.dtype=float16'],
            'optim_wrapper.dtype',
            'float16',
        ),
        (['model.allow_random_teacher=True'], 'model.allow_random_teacher', True),
        (['custom_hooks.2.weight_growth_factor=None'], 'custom_hooks.2.weight_growth_factor', None),
        (['model.loss_guard.divergence_factor=None'], 'model.loss_guard.divergence_factor', None),
        (['model.distill_losses.pd.inputs=x'], 'model.distill_losses.pd.inputs', 'x'),  # routing
        # a keyword of what mmengine builds from a dict without type
        (['train_dataloader.pin_memory=True'], 'train_dataloader.pin_memory', True),
        (['train_cfg.val_begin=2'], 'train_cfg.val_begin', 2),
        (['randomness.diff_rank_seed=True'], 'randomness.diff_rank_seed', True),
        # a new entry of a dict of named entries (annotated dict[str, ...]); a Runner key
        (
            ['model.student_taps.extra=backbone.layer1'],
            'model.student_taps.extra',
            'backbone.layer1',
        ),
        (['default_hooks.visualization=None'], 'default_hooks.visualization', None),
        (['load_strict=False'], 'load_strict', False),
        (['custom_hooks.0.type=X'], 'custom_hooks.0.type', 'X'),
        # the escape hatch: +key is added unchecked
        (['+model.foo=1'], 'model.foo', 1),
    ],
)
def test_new_keys_that_something_takes_are_accepted(options, key, value):
    from mmengine.config import DictAction

    from mlkd.utils.cli import load_config

    parsed = {k: DictAction._parse_iterable(v) for k, v in (o.split('=') for o in options)}
    cfg = load_config(MULTIDIGITS_3D, parsed)
    node = cfg
    for part in key.split('.'):
        node = node[int(part)] if isinstance(node, list) else node[part]
    assert node == value


def _train_tool(work_dir, *args: str):
    """``python tools/train.py MULTIDIGITS_STUDENT --work-dir WORK_DIR ARGS``, as a user would."""
    return run_tool('tools/train.py', MULTIDIGITS_STUDENT, '--work-dir', str(work_dir), *args)


def test_amp_adds_the_type_that_takes_the_dtype_option(tmp_path):
    train = load_tool('train')
    args = _train_args(tmp_path, 'optim_wrapper.dtype=float16', amp=True)
    assert train.build_cfg(args).optim_wrapper.type == 'MixedPrecisionOptimWrapper'
    with pytest.raises(KeyError, match="optim_wrapper has no key 'dtype'"):
        train.build_cfg(_train_args(tmp_path, 'optim_wrapper.dtype=float16'))


def test_a_learning_rate_that_one_cycle_overrides_is_refused(tmp_path):
    """``optim_wrapper.optimizer.lr=1e6`` did nothing under OneCycleLR (which sets the rate from
    its eta_max at every step): the run trained as shipped and exited 0."""
    work_dir = tmp_path / 'work'
    out = _train_tool(work_dir, '--cfg-options', 'optim_wrapper.optimizer.lr=1e6', *SMALL_TOOL_RUN)
    assert out.returncode != 0
    assert out.stderr.strip().splitlines()[-1] == (
        'ValueError: --cfg-options optim_wrapper.optimizer.lr=1000000.0: has no effect, '
        'param_scheduler[0] (OneCycleLRWithMultipliers) sets the learning rate from its eta_max '
        '(the peak) at every step; set param_scheduler.0.eta_max instead (now 0.002)'
    ), out.stderr[-2000:]
    assert not work_dir.exists()


def test_train_tool_stops_a_diverging_run_before_any_checkpoint(tmp_path):
    """A peak learning rate of 1e6, as a user sets it: the loss explodes from ~110 to ~1e13 at
    the second iteration; the run stops there, exit status 1, no checkpoint written."""
    work_dir = tmp_path / 'work'
    out = _train_tool(
        work_dir,
        '--no-validate',
        '--cfg-options',
        'param_scheduler.0.eta_max=1e6',
        *SMALL_TOOL_RUN,
        'train_dataloader.batch_size=16',
    )  # four iterations
    assert out.returncode == 1
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith(
        'mlkd.models.algorithms.loss_guard.DivergedTrainingError: diverging '
        'loss at epoch 1, iteration 2'
    ), out.stderr[-2000:]
    assert 'The learning rate is likely too high' in last
    assert not glob.glob(str(work_dir / '*.pth'))


def test_misspelled_top_level_key_in_a_config_file(tmp_path):
    from mlkd.utils.cli import load_config

    leaf = tmp_path / 'leaf.py'
    leaf.write_text(f"_base_ = ['{MULTIDIGITS_STUDENT}']\nlaod_from = 'x.pth'\nmy_variable = 3\n")
    with pytest.raises(
        KeyError,
        match=rf"{leaf}: unknown top-level key 'laod_from'.*did you "
        'mean load_from',
    ):
        load_config(str(leaf))


def test_train_tool_refuses_a_misspelled_option_before_writing_anything(tmp_path):
    work_dir = tmp_path / 'work'
    out = _train_tool(work_dir, '--cfg-options', 'randomnes.seed=5')
    assert out.returncode != 0
    assert 'did you mean randomness?' in out.stderr.splitlines()[-1], out.stderr[-2000:]
    assert not work_dir.exists()


@pytest.mark.parametrize('broken', ['leaf', 'base'])
def test_config_syntax_error_names_file_and_line(tmp_path, broken):
    from mlkd.utils.cli import load_config

    base, leaf = tmp_path / 'base.py', tmp_path / 'leaf.py'
    base.write_text('a = dict(\n    b=2\n    c=3)\n' if broken == 'base' else 'a = 1\n')
    leaf.write_text(
        "_base_ = ['base.py']\nx = (1,\ny = 2\n" if broken == 'leaf' else "_base_ = ['base.py']\n"
    )
    with pytest.raises(SyntaxError) as error:
        load_config(str(leaf))
    culprit, line = (leaf, 2) if broken == 'leaf' else (base, 2)
    assert f'syntax error in config file {culprit}, line {line}' in str(error.value)


def _train_args(work_dir, *options, resume=None, amp=False):
    """What ``tools/train.py MULTIDIGITS_STUDENT --work-dir W --no-validate --cfg-options ...``
    parses."""
    from mmengine.config import DictAction

    parsed = {
        key: DictAction._parse_iterable(value)
        for key, value in (option.split('=', 1) for option in options)
    }
    return types.SimpleNamespace(
        config=MULTIDIGITS_STUDENT,
        launcher='none',
        work_dir=str(work_dir),
        cfg_options=parsed or None,
        resume=resume,
        amp=amp,
        auto_scale_lr=False,
        vis_backend=None,
        no_validate=True,
    )


def test_resume_without_checkpoint_in_the_work_dir_fails(tmp_path):
    train = load_tool('train')
    args = _train_args(tmp_path, resume='auto')
    with pytest.raises(
        FileNotFoundError,
        match=rf"--resume: the work dir '{tmp_path}' holds no "
        'checkpoint',
    ):
        train.build_cfg(args)


def test_teacher_ckpt_none_needs_an_explicit_switch():
    cfg = Config.fromfile(MULTIDIGITS_3D).model
    cfg.teacher_ckpt = None
    with (
        DefaultScope.overwrite_default_scope('mlkd'),
        pytest.raises(ValueError, match='model.teacher_ckpt is None.*allow_random_teacher'),
    ):
        MODELS.build(cfg)
    assert _random_distiller().teacher_ckpt is None  # the test-only switch


def _labelled_dataset(tmp_path, lines):
    from mlkd.datasets import MultiLabelImageList

    root = tmp_path / 'root'
    for line in lines:
        write_jpeg(root / line.split()[0])
    (root / 'ann.txt').write_text('\n'.join(lines) + '\n')
    return MultiLabelImageList(data_root=str(root), ann_file='ann.txt', classes=['a', 'b', 'c'])


def _keyed_loader(dataset):
    sampler = dict(type='DefaultSampler', shuffle=False)
    return MLKDRunner.build_dataloader(dict(dataset=dataset, sampler=sampler, batch_size=1))


def _coverage_warnings(train_set, val_set, max_epochs=1) -> list[str]:
    hook, said = LabelCoverageHook(), []
    hook._warn = said.append
    runner = types.SimpleNamespace(
        train_loop=types.SimpleNamespace(max_epochs=max_epochs),
        # The loaders as a run has them: MLKDRunner's, their datasets in its KeyedDataset.
        train_dataloader=_keyed_loader(train_set),
        val_dataloader=_keyed_loader(val_set) if val_set else None,
    )
    hook.before_train(runner)
    return said


def test_label_coverage_warnings_name_the_dataset_and_classes(tmp_path):
    no_positive = _labelled_dataset(tmp_path / 'n', ['x.jpg', 'y.jpg'])
    only_a = _labelled_dataset(tmp_path / 'a', ['x.jpg 0', 'y.jpg 0 1'])
    said = _coverage_warnings(no_positive, only_a, max_epochs=0)
    assert 'max_epochs is 0' in said[0]
    assert (
        'train_dataloader.dataset (MultiLabelImageList, 2 samples): no sample has a '
        'positive label' in said[1]
    )
    assert (
        'val_dataloader.dataset (MultiLabelImageList, 2 samples): 1 of 3 classes have no '
        'positive sample: c.' in said[2]
    )
    assert _coverage_warnings(only_a, None) == [said[2].replace('val_', 'train_')]
    complete = _labelled_dataset(tmp_path / 'c', ['x.jpg 0 2', 'y.jpg 1'])
    assert _coverage_warnings(complete, complete) == []


# --- the culprit is named -----------------------------------------------------------------------


@pytest.mark.parametrize('backend', ['pillow', 'cv2'])
def test_a_truncated_image_names_its_path_and_sample(tmp_path, backend):
    from mlkd.datasets import EpochKeyedSampler, MultiLabelImageList

    root = tmp_path / 'root'
    write_jpeg(root / 'good.jpg')
    write_jpeg(root / 'bad.jpg', size=(200, 200))
    data = (root / 'bad.jpg').read_bytes()
    (root / 'bad.jpg').write_bytes(data[: len(data) // 3])
    (root / 'ann.txt').write_text('good.jpg 0\nbad.jpg 1\n')
    # Through the loader MLKDRunner builds (its dataset wrapped in KeyedDataset).
    loader = MLKDRunner.build_dataloader(
        dict(
            dataset=dict(
                type=MultiLabelImageList,
                data_root=str(root),
                ann_file='ann.txt',
                classes=['a', 'b'],
                pipeline=[dict(type='LoadImageFromFile', imdecode_backend=backend)],
            ),
            sampler=dict(type=EpochKeyedSampler, shuffle=False),
            batch_size=1,
            collate_fn=dict(type=list),
        ),
        seed=0,
    )
    batches = iter(loader)
    assert next(batches)[0]['img'].shape[:2] == (30, 40)
    with pytest.raises(Exception) as error:
        next(batches)
    notes = '\n'.join(getattr(error.value, '__notes__', []))
    assert f'while loading sample 1 of MultiLabelImageList: {root / "bad.jpg"}' in notes, (
        type(error.value),
        error.value,
        notes,
    )


@pytest.mark.parametrize(
    'script,args', [('dist_train.sh', ['CONFIG']), ('dist_test.sh', ['CONFIG', 'CKPT'])]
)
@pytest.mark.parametrize('gpus', ['0', '-1', 'two', '1.5'])
def test_dist_scripts_validate_gpus(script, args, gpus):
    out = subprocess.run(
        ['bash', osp.join(REPO, 'tools', script), *args, gpus],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert f"GPUS must be a positive integer (processes per node), got '{gpus}'" in out.stderr


def _classifier_runner(tmp_path):
    cfg = small_run_cfg(
        MULTIDIGITS_STUDENT,
        str(tmp_path / 'work'),
        epochs=1,
        train_samples=16,
        val_samples=16,
        batch_size=16,
    )
    return build_runner(cfg)


@pytest.mark.parametrize('kind', ['distiller', 'twelve_classes'])
def test_a_checkpoint_of_another_model_is_refused_with_advice(tmp_path, kind):
    """Issue 11: a plain classifier config given a distiller checkpoint loaded nothing and
    printed an mAP; a 12-class head's checkpoint for the 10-class config."""
    from mlkd.utils.checkpoint import CheckpointMismatchError

    runner = _classifier_runner(tmp_path)
    state = runner.model.state_dict()
    if kind == 'distiller':
        state = {f'{net}.{k}': v for net in ('student', 'teacher') for k, v in state.items()}
        advice = 'python tools/export_student.py'
    else:
        state = {
            k: torch.zeros(12, *v.shape[1:]) if k.startswith('head.fc') else v
            for k, v in state.items()
        }
        advice = 'size mismatch for head.fc.weight'
    path = str(tmp_path / f'{kind}.pth')
    torch.save({'state_dict': state, 'meta': {}}, path)
    with pytest.raises(CheckpointMismatchError, match=rf"checkpoint '{path}' does not fit"):
        runner.load_checkpoint(path)
    with pytest.raises(CheckpointMismatchError) as error:
        runner.load_checkpoint(path)
    assert advice in str(error.value)


def test_a_plain_checkpoint_given_to_a_distiller_config_is_refused_with_advice(tmp_path):
    """The reverse mistake: a classifier's own checkpoint given to the distillation config (whose
    networks are under student. / teacher.): load_strict=False would load nothing."""
    from mlkd.utils.checkpoint import CheckpointMismatchError

    plain = _classifier_runner(tmp_path).model.state_dict()
    path = str(tmp_path / 'plain.pth')
    torch.save({'state_dict': plain, 'meta': {}}, path)
    cfg = small_run_cfg(MULTIDIGITS_3D, str(tmp_path / 'distiller'), epochs=1, train_samples=16)
    cfg.model.teacher_ckpt, cfg.model.allow_random_teacher = None, True
    with pytest.raises(CheckpointMismatchError, match='It is a plain classifier checkpoint'):
        build_runner(cfg).load_checkpoint(path)


# --- interrupted runs and unusable work dirs ----------------------------------------------------


#: SIGINT unwinds the run (KeyboardInterrupt: ``finally`` blocks and exit handlers run, possibly
#: mid-save); SIGKILL ends it at once. SIGTERM (what a scheduler sends) is not in the list: neither
#: mlkd, mmengine nor torch's single-process loader installs a handler for it in tools/train.py, so
#: its default action ends the process exactly as SIGKILL does.
@pytest.mark.parametrize('sig', ['SIGINT', 'SIGKILL'])
def test_a_run_stopped_by_a_signal_leaves_loadable_checkpoints_and_resumes(tmp_path, sig):
    import signal
    import sys
    import time

    from mlkd.utils.checkpoint import load_local_checkpoint

    work_dir = tmp_path / 'work'
    options = [
        'train_dataloader.dataset.num_samples=32',
        'train_dataloader.batch_size=16',
        'train_dataloader.num_workers=0',
        'train_dataloader.persistent_workers=False',
    ]
    process = subprocess.Popen(
        [
            sys.executable,
            'tools/train.py',
            MULTIDIGITS_STUDENT,
            '--work-dir',
            str(work_dir),
            '--no-validate',
            '--cfg-options',
            'train_cfg.max_epochs=100000',
            *options,
        ],
        cwd=REPO,
        env={**os.environ, 'PYTHONPATH': REPO},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        # A user's shell starts the tool with Ctrl-C at its default; a pytest-xdist process
        # ignores SIGINT, and an ignored signal stays ignored in children (and Python then
        # installs no KeyboardInterrupt handler), so the run would go on regardless.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.time() + 240
        # Wait for the first finished checkpoint: ``last_checkpoint`` is written once one is
        # complete and stays, while ``epoch_1.pth`` itself is deleted two epochs later (the
        # shipped hook keeps two), which a poll can miss when epochs take a fraction of a second.
        while (
            not (work_dir / 'last_checkpoint').exists()
            and process.poll() is None
            and time.time() < deadline
        ):
            time.sleep(0.2)
        assert process.poll() is None, process.stderr.read()[-2000:]
        process.send_signal(getattr(signal, sig))
        process.wait(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode != 0
    saved = sorted(glob.glob(str(work_dir / 'epoch_*.pth')))
    assert saved
    for path in saved:  # every checkpoint on disk is complete (atomic writes)
        assert 'state_dict' in load_local_checkpoint(path)
    last = (work_dir / 'last_checkpoint').read_text().strip()
    assert last in saved
    # --resume continues from it for one more epoch.
    epoch = int(osp.basename(last)[len('epoch_') : -len('.pth')])
    train = load_tool('train')
    cfg = train.build_cfg(
        _train_args(work_dir, *options, f'train_cfg.max_epochs={epoch + 1}', resume='auto')
    )
    runner = build_runner(cfg)
    runner.train()
    assert runner.epoch == epoch + 1 and (work_dir / f'epoch_{epoch + 1}.pth').is_file()
    # Why SIGTERM needs no run of its own: a run built and trained installs no handler for it.
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_a_work_dir_that_is_a_file_is_named(tmp_path):
    not_a_folder = tmp_path / 'work'
    not_a_folder.write_text('precious')
    out = _train_tool(not_a_folder, '--cfg-options', 'train_cfg.max_epochs=1')
    assert out.returncode != 0
    assert f"File exists: '{not_a_folder}'" in out.stderr.splitlines()[-1], out.stderr[-2000:]
    assert not_a_folder.read_text() == 'precious'


#: Linux capabilities that let root ignore file modes (linux/capability.h), and the prctl that
#: drops one from the bounding set, so that neither the child nor what it executes has it.
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, PR_CAPBSET_DROP = 1, 2, 24


def _obey_file_modes() -> None:
    """``preexec_fn`` for root: drop the capabilities that bypass file modes. The process stays
    uid 0, so it still reads what root owns (the Python under /root, mode 0700); unlike running
    as 'nobody', which cannot reach that Python."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), 'prctl(PR_CAPBSET_DROP) refused')


def test_a_read_only_work_dir_is_named(tmp_path):
    """As a user (or as root in CI, without the capabilities that ignore file modes) a work dir
    without write permission fails naming the path."""
    import sys

    work_dir = tmp_path / 'work'
    work_dir.mkdir()
    work_dir.chmod(0o500)
    as_root = hasattr(os, 'geteuid') and os.geteuid() == 0
    preexec_fn = _obey_file_modes if as_root else None
    try:
        if as_root:  # check that dropping the capabilities works in this container
            try:
                probe = subprocess.run(
                    [sys.executable, '-c', f'open({str(work_dir / "probe")!r}, "w")'],
                    preexec_fn=preexec_fn,
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
            except subprocess.SubprocessError as error:
                pytest.skip(f'running as root and cannot drop CAP_DAC_OVERRIDE: {error}')
            if 'PermissionError' not in probe.stderr:
                pytest.skip(
                    'running as root, and a child without CAP_DAC_OVERRIDE still '
                    f'writes into a read-only folder: {probe.stderr[-300:]}'
                )
        out = subprocess.run(
            [
                sys.executable,
                'tools/train.py',
                MULTIDIGITS_STUDENT,
                '--work-dir',
                str(work_dir),
                '--cfg-options',
                *SMALL_TOOL_RUN,
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, 'PYTHONPATH': REPO},
            preexec_fn=preexec_fn,
        )
    finally:
        work_dir.chmod(0o700)
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith('PermissionError') and str(work_dir) in last, out.stderr[-2000:]
    assert os.listdir(work_dir) == []


def test_dist_train_on_a_busy_port_names_the_port(tmp_path):
    import socket

    with socket.socket() as busy:
        busy.bind(('127.0.0.1', 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = subprocess.run(
            [
                'bash',
                'tools/dist_train.sh',
                MULTIDIGITS_STUDENT,
                '1',
                '--work-dir',
                str(tmp_path / 'work'),
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, 'PORT': str(port)},
        )
    assert out.returncode != 0
    assert 'EADDRINUSE' in out.stderr and f'port: {port}' in out.stderr, out.stderr[-3000:]


def test_resume_with_a_checkpoint_of_another_architecture_names_file_and_keys(
    tmp_path, student_run
):
    """Issue 11: this failed deep in the optimizer ("different number of parameter groups").
    The classifier checkpoint is the session's shared one (a full training checkpoint with
    optimizer state, as a resume reads)."""
    from mlkd.utils.checkpoint import CheckpointMismatchError

    checkpoint = student_run['checkpoint']
    cfg = small_run_cfg(
        MULTIDIGITS_3D,
        str(tmp_path / 'distiller'),
        epochs=2,
        train_samples=16,
        val_samples=16,
        batch_size=16,
    )
    cfg.model.update(teacher_ckpt=None, allow_random_teacher=True)
    cfg.resume, cfg.load_from = True, checkpoint
    before = open(checkpoint, 'rb').read()
    with pytest.raises(CheckpointMismatchError) as error:
        build_runner(cfg).train()
    message = str(error.value)
    assert f"checkpoint '{checkpoint}' does not fit the model (SingleTeacherDistiller)" in message
    assert 'missing keys in source state_dict: student.' in message
    assert open(checkpoint, 'rb').read() == before


def test_a_missing_config_is_named():
    from mlkd.utils.cli import load_config

    with pytest.raises(FileNotFoundError, match='config file not found: configs/nope.py'):
        load_config('configs/nope.py')
