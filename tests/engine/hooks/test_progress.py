"""ProgressBarHook: one rewritten line with the loss, without warnings of its own."""

import io
import types
import warnings

import torch

from mlkd.engine.hooks.progress import ProgressBarHook


def test_the_line_shows_a_loss_that_requires_grad_without_a_warning():
    """The step's loss still requires grad: reading it warned on every iteration."""
    stream = io.StringIO()
    hook = ProgressBarHook(label='KD', stream=stream)
    runner = types.SimpleNamespace(iter=0, max_iters=4, epoch=0, max_epochs=2)
    hook.before_train(runner)
    loss = (torch.ones(2, requires_grad=True) * 1.25).sum()
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        hook.after_train_iter(runner, 0, outputs={'loss': loss})
    assert 'KD [' in stream.getvalue() and 'epoch 1/2 iter 1/4 loss 2.5 ' in stream.getvalue()
