"""Mixed precision: ``MixedPrecisionOptimWrapper`` and the distiller under autocast.

PyTorch runs float16 autocast and loss scaling on CPU too, so the whole ``--amp`` path (fp16
activations in teacher and student, fp32 losses, dynamic loss scaling with skipped steps, the
scaler in checkpoints, resume) is exercised here without a GPU.
"""

import os.path as osp

import pytest
import torch
from conftest import (
    MULTIDIGITS_3D,
    MULTIDIGITS_STUDENT,
    SMALL_TOOL_RUN,
    assert_same_state,
    run_tool,
    small_run_cfg,
    whole_and_resumed_runs,
)
from mmengine.hooks import Hook
from mmengine.optim import AmpOptimWrapper
from torch import nn

from mlkd.engine.optimizers import MixedPrecisionOptimWrapper
from mlkd.models.losses import full_precision
from mlkd.models.losses.base import RoutedLoss
from mlkd.registry import HOOKS, MODELS

# --- the wrapper on its own -------------------------------------------------------------------


def _wrapper(model, lr=0.1, **kw):
    return MixedPrecisionOptimWrapper(
        optimizer=torch.optim.SGD(model.parameters(), lr=lr), device='cpu', **kw
    )


def _linear(seed=0):
    torch.manual_seed(seed)
    return nn.Linear(16, 4)


def _step(model, wrapper, x, y, scale=1.0):
    with wrapper.optim_context(model):
        out = model(x)
        loss = nn.functional.mse_loss(out.float(), y, reduction='sum') * scale
    wrapper.update_params(loss)
    return out.dtype


@pytest.mark.parametrize('dtype,scaling', [(None, False), ('bfloat16', False), ('float16', True)])
def test_dtype_and_loss_scaling_defaults_on_cpu(dtype, scaling):
    wrapper = _wrapper(_linear(), dtype=dtype)
    assert wrapper.cast_dtype == (torch.float16 if dtype == 'float16' else torch.bfloat16)
    assert wrapper.loss_scaler.is_enabled() is scaling
    assert isinstance(wrapper, AmpOptimWrapper)  # mmengine code that checks the type still works


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match='dtype must be one of'):
        _wrapper(_linear(), dtype='float8')
    with pytest.raises(TypeError, match='loss_scale'):
        _wrapper(_linear(), dtype='float16', loss_scale='static')
    with pytest.raises(ValueError, match="device 'mps'"):
        MixedPrecisionOptimWrapper(
            optimizer=torch.optim.SGD(_linear().parameters(), lr=0.1), device='mps'
        )


@pytest.mark.parametrize('clip', [None, dict(max_norm=0.05)])
def test_fp16_step_matches_fp32_step(clip):
    """Gradients are unscaled before the update (and before clipping): the scaled fp16 step is
    the fp32 step up to fp16 rounding, not ``scale`` times larger."""
    x, y = torch.randn(8, 16), torch.randn(8, 4)
    ref, amp = _linear(), _linear()
    plain = torch.optim.SGD(ref.parameters(), lr=0.1)
    loss = nn.functional.mse_loss(ref(x), y, reduction='sum')
    loss.backward()
    if clip:
        nn.utils.clip_grad_norm_(ref.parameters(), **clip)
    plain.step()
    wrapper = _wrapper(amp, dtype='float16', loss_scale=2.0**10, clip_grad=clip)
    assert _step(amp, wrapper, x, y) == torch.float16
    before = _linear()
    for p_ref, p_amp, p0 in zip(ref.parameters(), amp.parameters(), before.parameters()):
        torch.testing.assert_close(p_amp - p0, p_ref - p0, rtol=2e-2, atol=2e-3)


def test_overflowing_step_is_skipped_and_the_scale_backs_off():
    model = _linear()
    wrapper = _wrapper(model, dtype='float16', loss_scale=dict(init_scale=2.0**8))
    before = [p.detach().clone() for p in model.parameters()]
    x, y = torch.randn(8, 16), torch.randn(8, 4)
    # A finite fp32 loss whose scaled gradients overflow float16 (a NaN / inf loss itself is
    # refused by the wrapper's loss guard, scaling or not).
    _step(model, wrapper, x, y, scale=1e30)
    for p, p0 in zip(model.parameters(), before):
        assert torch.equal(p, p0)
    assert wrapper.loss_scaler.get_scale() == 2.0**7
    _step(model, wrapper, x, y)
    assert any(not torch.equal(p, p0) for p, p0 in zip(model.parameters(), before))


def test_scaler_state_round_trips_with_mmengine_layout():
    model = _linear()
    wrapper = _wrapper(model, dtype='float16', loss_scale=dict(init_scale=64.0, growth_interval=1))
    _step(model, wrapper, torch.randn(8, 16), torch.randn(8, 4))
    state = wrapper.state_dict()
    assert state['loss_scaler']['scale'] == 128.0  # grown once after a good step
    other = _wrapper(_linear(), dtype='float16')
    other.load_state_dict(state)
    assert other.loss_scaler.get_scale() == 128.0


# --- losses under autocast --------------------------------------------------------------------


def test_full_precision_switches_autocast_off_and_back_on():
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    with torch.autocast('cpu', dtype=torch.float16):
        assert (a @ b).dtype == torch.float16  # why casting the inputs is not enough
        with full_precision():
            assert (a @ b).dtype == torch.float32
        assert (a @ b).dtype == torch.float16


@pytest.mark.parametrize('clamp_eps', [None, 1e-8])
def test_task_loss_under_autocast_matches_fp32(clamp_eps):
    """The task loss runs inside the head, under autocast: the L2D clamp 1e-8 would underflow to
    zero in float16 (log 0 = -inf) if the loss did not cast its input first."""
    from mlkd.models.losses import BinaryCrossEntropySumLoss

    torch.manual_seed(0)
    logits = (torch.randn(4, 6) * 30).half()
    gt = (torch.rand(4, 6) > 0.5).float()
    loss = BinaryCrossEntropySumLoss(clamp_eps=clamp_eps)
    with torch.autocast('cpu', dtype=torch.float16):
        low = loss(logits, gt)
    assert low.dtype == torch.float32 and torch.isfinite(low)
    torch.testing.assert_close(low, loss(logits.float(), gt))


@MODELS.register_module(force=True)
class _AutocastProbeLoss(RoutedLoss):
    """Records the precision a distillation loss runs in."""

    seen: list = []

    def compute(self, s_logits, t_logits):
        product = s_logits @ t_logits.T
        self.seen.append((torch.is_autocast_enabled('cpu'), product.dtype))
        return product.mean() * 0


class _DtypeProbeHook(Hook):
    """Records the student's weights at the start, the loss scale after every iteration and the
    dtype of the first conv outputs of student and teacher."""

    def before_run(self, runner):
        model = runner.model
        self.start = {k: v.clone() for k, v in model.student.state_dict().items()}
        self.scales, self.dtypes, self._last = [], set(), {}
        for role in ('student', 'teacher'):
            conv = next(m for m in getattr(model, role).modules() if isinstance(m, nn.Conv2d))
            conv.register_forward_hook(
                lambda m, i, o, role=role: self._last.__setitem__(role, o.dtype)
            )

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.dtypes.update(self._last.items())
        self.scales.append(runner.optim_wrapper.loss_scaler.get_scale())
        assert all(torch.isfinite(v) for v in outputs.values())


HOOKS.register_module(module=_DtypeProbeHook, force=True)


def _amp_distill_cfg(work_dir, teacher_ckpt, epochs):
    # 4 iterations an epoch; batches of 4, since float16 convolutions are slow on a CPU (what
    # the tests read, dtypes, loss scaling and resume, does not depend on the batch)
    cfg = small_run_cfg(
        MULTIDIGITS_3D, work_dir, epochs=epochs, train_samples=16, batch_size=4, val_samples=8
    )
    cfg.model.teacher_ckpt = teacher_ckpt
    # A small initial scale and fast growth so that a few steps overflow and are skipped and a
    # few grow the scale within eight iterations.
    cfg.optim_wrapper.update(
        type='MixedPrecisionOptimWrapper',
        dtype='float16',
        loss_scale=dict(init_scale=2.0**10, growth_interval=2),
    )
    cfg.model.distill_losses['probe'] = dict(type='_AutocastProbeLoss')  # adds 0: a witness
    cfg.custom_hooks = list(cfg.custom_hooks) + [dict(type='_DtypeProbeHook')]
    return cfg


def _probe(runner):
    return next(h for h in runner.hooks if isinstance(h, _DtypeProbeHook))


@pytest.fixture(scope='module')
def fp16_runs(tmp_path_factory, multidigits_teacher_ckpt):
    """fp16 distillation from a trained teacher, 2 epochs of 4 iterations, and the same run
    killed after epoch 1 and resumed: the two tests below read these runs."""
    _AutocastProbeLoss.seen.clear()
    return whole_and_resumed_runs(
        lambda work, epochs: _amp_distill_cfg(work, multidigits_teacher_ckpt, epochs),
        tmp_path_factory.mktemp('fp16'),
    )


def test_distillation_trains_in_fp16_with_losses_in_fp32(fp16_runs):
    runner = fp16_runs[0]
    probe = _probe(runner)
    assert probe.dtypes == {('student', torch.float16), ('teacher', torch.float16)}
    # The networks ran under autocast, the losses with autocast off.
    assert _AutocastProbeLoss.seen and all(
        seen == (False, torch.float32) for seen in _AutocastProbeLoss.seen
    )
    assert min(probe.scales) < 2.0**10 or max(probe.scales) > 2.0**10
    changed = [
        k
        for k, v in runner.model.student.state_dict().items()
        if v.is_floating_point() and not torch.equal(v, probe.start[k])
    ]
    assert any(k.endswith('weight') for k in changed)
    ckpt = torch.load(
        osp.join(runner.work_dir, 'epoch_2.pth'), map_location='cpu', weights_only=False
    )
    assert ckpt['optimizer']['loss_scaler']['scale'] == probe.scales[-1]


def test_fp16_distillation_resume_equals_uninterrupted_run(fp16_runs):
    """Needs the loss scaler restored: another scale would skip other steps."""
    whole, resumed = fp16_runs
    scales = _probe(whole).scales
    assert len(set(scales)) > 1, scales  # the run did skip steps and grow the scale
    assert _probe(resumed).scales == scales[len(scales) // 2 :]
    assert_same_state(resumed.model, whole.model)


def test_train_tool_amp_runs_on_cpu(tmp_path):
    work = str(tmp_path / 'work')
    # A GPU machine hides its GPUs (a fresh interpreter then, since the environment differs).
    hide_gpus = {'CUDA_VISIBLE_DEVICES': ''} if torch.cuda.is_available() else None
    out = run_tool(
        'tools/train.py',
        MULTIDIGITS_STUDENT,
        '--amp',
        '--work-dir',
        work,
        '--cfg-options',
        *SMALL_TOOL_RUN,
        env=hide_gpus,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert (
        'mixed precision: autocast cpu to torch.bfloat16, loss scaling off'
        in out.stdout + out.stderr
    )
    ckpt = torch.load(osp.join(work, 'epoch_1.pth'), map_location='cpu', weights_only=False)
    assert 'loss_scaler' in ckpt['optimizer']
