"""A one-line progress display for interactive runs (the demo), instead of pages of log lines."""

from __future__ import annotations

import math
import sys
import time
from typing import TextIO

import torch
from mmengine.dist import is_main_process
from mmengine.hooks import Hook

from mlkd.registry import HOOKS
from mlkd.utils.tables import format_seconds


@HOOKS.register_module()
class ProgressBarHook(Hook):
    """Rewrite one terminal line (``\\r``) with epoch, iteration, total loss and ETA.

    The line is redrawn every ``interval`` iterations and ended with a newline when training
    finishes. Plain text only (no tqdm dependency); on the main process only.

    Args:
        label: text in front of the bar, e.g. the stage name.
        interval: redraw every ``interval`` iterations.
        width: characters of the bar itself.
        stream: where to write; ``None`` means ``sys.stdout`` at the time of writing.
    """

    priority = 'LOWEST'

    def __init__(
        self, label: str = '', interval: int = 1, width: int = 24, stream: TextIO | None = None
    ) -> None:
        self.label = label
        self.interval = max(int(interval), 1)
        self.width = int(width)
        self.stream = stream
        self._start = None
        self._start_iter = 0

    def _write(self, text: str) -> None:
        stream = self.stream or sys.stdout
        stream.write(text)
        stream.flush()

    def before_train(self, runner) -> None:
        self._start = time.perf_counter()
        self._start_iter = runner.iter

    def after_train_iter(self, runner, batch_idx: int, data_batch=None, outputs=None) -> None:
        if not is_main_process() or (runner.iter + 1) % self.interval != 0:
            return
        done, total = runner.iter + 1, runner.max_iters
        elapsed = time.perf_counter() - self._start
        rate = elapsed / max(done - self._start_iter, 1)
        filled = int(self.width * done / max(total, 1))
        loss = outputs.get('loss', math.nan) if outputs else math.nan
        loss = float(loss.detach() if torch.is_tensor(loss) else loss)  # no autograd warning
        self._write(
            f'\r{self.label} [{"#" * filled}{"." * (self.width - filled)}] '
            f'epoch {runner.epoch + 1}/{runner.max_epochs} iter {done}/{total} '
            f'loss {loss:.4g} elapsed {format_seconds(elapsed)} '
            f'ETA {format_seconds(rate * (total - done))}   '
        )

    def after_train(self, runner) -> None:
        if is_main_process():
            elapsed = time.perf_counter() - (self._start or time.perf_counter())
            self._write(
                f'\r{self.label} done in {format_seconds(elapsed)}' + ' ' * (self.width + 60) + '\n'
            )
