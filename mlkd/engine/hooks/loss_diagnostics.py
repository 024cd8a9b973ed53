"""Per-term loss diagnostics: how hard each distillation term pulls on the student vs the task.

Every ``interval`` training iterations, before the optimizer step, the hook evaluates the model's
loss dict once more on the same batch and reports for each ``loss_*`` term

* ``value``: the weighted value the training step adds to the total,
* ``grad_norm``: the L2 norm of its gradient w.r.t. the parameters of one shared module
  (default: the last parameterised layer of the student's backbone),
* ``value_ratio`` / ``grad_ratio``: both relative to the task term (``loss_cls``),
* ``cos``: the cosine between its gradient and the task term's gradient (< 0: they conflict).

The diagnostic pass must not change training. It runs under a forked torch RNG (and saved numpy /
Python RNG states), so dropout draws the same masks in the diagnostic pass and in the training step
(the diagnostics describe exactly the step that follows) and the training stream is left where it
was; every buffer (BatchNorm running statistics, ``num_batches_tracked``) is restored afterwards;
gradients are taken with :func:`torch.autograd.grad`, which leaves ``.grad`` untouched. Training
with the hook gives bit-identical weights to training without it
(``tests/models/losses/test_loss_diagnostics.py``).

Cost: one extra forward and one backward per term on diagnostic iterations only.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from torch import nn

from mlkd.registry import HOOKS

TASK_KEY = 'loss_cls'


def last_parameterised_layer(module: nn.Module) -> str:
    """Dotted path (inside ``module``) of the last submodule owning trainable parameters itself.

    In a CIFAR ResNet that is the last block's final BatchNorm: its affine parameters sit on every
    path from the features to the heads. (The convolution before it would be a poor default: with
    ``zero_init_residual`` its gradient is exactly 0 at the first iteration.)
    """
    found = None
    for name, sub in module.named_modules():
        if name and any(p.requires_grad for p in sub.parameters(recurse=False)):
            found = name
    if found is None:
        raise ValueError(
            f'{type(module).__name__} has no submodule with trainable parameters; '
            'set LossDiagnosticsHook(module=...)'
        )
    return found


def default_module_path(model: nn.Module) -> str:
    """The last parameterised layer of the student's backbone (or of the model's own backbone)."""
    net = getattr(model, 'student', model)
    prefix = 'student.' if net is not model else ''
    backbone = getattr(net, 'backbone', None)
    if backbone is None:
        return prefix + last_parameterised_layer(net)
    return f'{prefix}backbone.{last_parameterised_layer(backbone)}'


@contextmanager
def preserved_state(model: nn.Module) -> Iterator[None]:
    """Leave every RNG stream, every buffer of ``model`` and the host-memory state of its
    stateful losses (``register_state(host=True)``, e.g. SCL's heat-map store: plain attributes,
    not buffers) as they were before the block."""
    py_state, np_state = random.getstate(), np.random.get_state()
    buffers = [(b, b.detach().clone()) for b in model.buffers()]
    host = [
        (module, name, getattr(module, name).clone())
        for module in model.modules()
        for name, (_, on_host) in getattr(module, '_state_keys', {}).items()
        if on_host
    ]
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_initialized() else []
    try:
        with torch.random.fork_rng(devices=devices):
            yield
    finally:
        with torch.no_grad():
            for buffer, saved in buffers:
                buffer.copy_(saved)
        for module, name, saved in host:
            object.__setattr__(module, name, saved)
        random.setstate(py_state)
        np.random.set_state(np_state)


def loss_term_diagnostics(
    losses: dict[str, torch.Tensor], params: list[nn.Parameter], task_key: str = TASK_KEY
) -> dict[str, dict[str, float]]:
    """Weighted value, gradient norm on ``params`` and cosine with the task gradient per term.

    Args:
        losses: the model's loss dict (``loss_cls``, ``loss_<name>``, ``loss_<name>_<term>``, plus
            non-loss entries such as accuracies, which are skipped).
        params: parameters the gradients are taken with respect to.
        task_key: key of the task term the ratios refer to.

    Returns:
        ``{term: {'value', 'grad_norm', 'value_ratio', 'grad_ratio', 'cos'}}``; the ratios and the
        cosine are absent when there is no task term (and NaN when its value / gradient is 0).
    """
    terms = {
        k: v
        for k, v in losses.items()
        if k.startswith('loss') and isinstance(v, torch.Tensor) and v.requires_grad
    }
    grads = {}
    names = list(terms)
    for i, key in enumerate(names):
        got = torch.autograd.grad(
            terms[key], params, retain_graph=i < len(names) - 1, allow_unused=True
        )
        grads[key] = torch.cat(
            [(g if g is not None else torch.zeros_like(p)).reshape(-1) for g, p in zip(got, params)]
        ).double()
    out = {}
    task = grads.get(task_key)
    for key in names:
        value, norm = float(terms[key].detach()), float(grads[key].norm())
        row = dict(value=value, grad_norm=norm)
        if task is not None:
            task_value, task_norm = float(terms[task_key].detach()), float(task.norm())
            row['value_ratio'] = value / task_value if task_value != 0 else float('nan')
            row['grad_ratio'] = norm / task_norm if task_norm != 0 else float('nan')
            denom = norm * task_norm
            row['cos'] = float(grads[key] @ task) / denom if denom != 0 else float('nan')
        out[key] = row
    return out


@HOOKS.register_module()
class LossDiagnosticsHook(Hook):
    """Log each loss term's weighted value and gradient norm on a shared layer, every ``interval``.

    Scalars ``diag/<term>/<stat>`` (stats as in :func:`loss_term_diagnostics`) go to the
    visualizer (``vis_data/scalars.json``) at the step of the iteration; one summary line per
    diagnostic iteration goes to the log. Works for distillers and plain classifiers.

    Args:
        interval: run on iterations ``0, interval, 2·interval, ...`` (counted over the whole run).
        module: dotted path, inside the (unwrapped) model, of the module whose parameters the
            gradients are taken on; ``None`` picks the last parameterised layer of the student's
            backbone (:func:`default_module_path`).
        task_key: the task term the ratios refer to.
    """

    priority = 'LOW'

    def __init__(
        self, interval: int = 50, module: str | None = None, task_key: str = TASK_KEY
    ) -> None:
        if not isinstance(interval, int) or interval < 1:
            raise ValueError(
                f'LossDiagnosticsHook: interval must be a positive int, got {interval!r}'
            )
        self.interval = interval
        self.module = module
        self.task_key = task_key

    def _params(self, model: nn.Module) -> tuple[str, list[nn.Parameter]]:
        path = self.module or default_module_path(model)
        try:
            module = model.get_submodule(path)
        except AttributeError as err:
            raise ValueError(
                f'LossDiagnosticsHook: module {path!r} not found in {type(model).__name__}'
            ) from err
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise ValueError(f'LossDiagnosticsHook: module {path!r} has no trainable parameters')
        return path, params

    def before_train_iter(self, runner, batch_idx: int, data_batch=None) -> None:
        if runner.iter % self.interval != 0 or data_batch is None:
            return
        model = runner.model.module if is_model_wrapper(runner.model) else runner.model
        path, params = self._params(model)
        with preserved_state(model), runner.optim_wrapper.optim_context(model):
            data = model.data_preprocessor(data_batch, True)
            losses = model(**data, mode='loss')
            stats = loss_term_diagnostics(losses, params, self.task_key)
        scalars = {
            f'diag/{term}/{stat}': value
            for term, row in stats.items()
            for stat, value in row.items()
        }
        for key, value in scalars.items():
            runner.message_hub.update_scalar(key, value)
        runner.visualizer.add_scalars(scalars, step=runner.iter + 1)
        runner.logger.info(
            f'diagnostics (iter {runner.iter + 1}, grads on {path}): '
            + '  '.join(
                f'{term}: value {row["value"]:.4g} grad {row["grad_norm"]:.3g}'
                + (
                    f' ×task {row["grad_ratio"]:.3g} cos {row["cos"]:+.2f}'
                    if 'grad_ratio' in row and term != self.task_key
                    else ''
                )
                for term, row in stats.items()
            )
        )
