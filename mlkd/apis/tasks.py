"""Run a graph of tasks in N single-thread worker processes, resumable, with progress lines.

A :class:`Task` is a function, its argument and the tasks whose results it needs; a benchmark
(:mod:`mlkd.apis.benchmark`) declares its stages and teacher caches as tasks and
:func:`run_tasks` runs them: each as soon as what it needs has finished, ``jobs`` at a time.

* One worker: the tasks run one after the other in this process, and each may draw its own live
  progress line (``live_progress=True``).
* Several: each task runs in a worker process of its own (``spawn``), and one line is printed per
  start and per end.
* Every task computes on one thread (:func:`single_thread`), whatever the number of workers: the
  float sums then run in one order, so a task gives the same bits alone or beside others. With
  one worker the caller's thread count is restored when :func:`run_tasks` returns.
* Resumable: results already known (``finished``, e.g. read back from an earlier call's files)
  are not computed again, and a task wanted only by finished tasks (``wanted=False``, such as a
  cache that only finished stages read) is skipped.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import torch

__all__ = ['Task', 'pending_tasks', 'run_tasks', 'single_thread']


@dataclass(frozen=True)
class Task:
    """One unit of work of a graph.

    Attributes:
        key: unique among the graph's tasks (e.g. ``('stage', 'KD', 0)``).
        function: ``function(job, needs, live_progress) -> result``; ``needs`` maps the key of
            each task in ``after`` to its result, ``live_progress`` is True when the task runs
            alone in this process (it may draw a progress line). A module-level function, so
            that a worker process can import it.
        job: the function's argument (picklable).
        after: keys of the tasks that must finish first.
        name: what the task does, for the start line (``'[seed 0] KD'``).
        report: ``report(result, seconds) -> str``, the line printed when it ends (in this
            process).
        wanted: whether the task is wanted for itself; ``False``: only when a task that has not
            finished needs it.
    """

    key: Hashable
    function: Callable[[Any, dict, bool], Any]
    job: Any
    after: tuple = ()
    name: str = ''
    report: Callable[[Any, float], str] | None = None
    wanted: bool = True


def single_thread() -> None:
    """Compute on one thread (torch's intra-op pool), in this process or a worker."""
    torch.set_num_threads(1)


def pending_tasks(tasks: Sequence[Task], finished: Mapping[Hashable, Any]) -> list[Task]:
    """The tasks still to run, in the order given: every wanted task not in ``finished``, and
    what those need (transitively) that is not finished either.

    Raises:
        ValueError: a task needs a key that is neither a task nor finished, or two tasks share
            a key.
    """
    by_key = {task.key: task for task in tasks}
    if len(by_key) != len(tasks):
        raise ValueError('run_tasks: two tasks share a key')
    for task in tasks:
        unknown = [key for key in task.after if key not in by_key and key not in finished]
        if unknown:
            raise ValueError(f'run_tasks: task {task.key} needs {unknown}, which no task makes')
    needed: set = set()
    stack = [task.key for task in tasks if task.wanted and task.key not in finished]
    while stack:
        key = stack.pop()
        if key in needed:
            continue
        needed.add(key)
        stack.extend(k for k in by_key[key].after if k not in finished)
    return [task for task in tasks if task.key in needed]


def run_tasks(
    tasks: Sequence[Task],
    jobs: int,
    finished: Mapping[Hashable, Any] | None = None,
    *,
    started: float | None = None,
    log: Callable[[str], None] = lambda line: print(line, flush=True),
) -> dict[Hashable, Any]:
    """Run what :func:`pending_tasks` leaves, ``jobs`` at a time (see the module doc).

    Args:
        tasks: the graph, in the order one process runs it.
        jobs: worker processes at most (1: in this process).
        finished: results known already, by task key (not run again).
        started: :func:`time.perf_counter` of the start of the whole call, for the elapsed time
            of the start lines (default: now).
        log: where the start and end lines go.

    Returns:
        the results by task key, ``finished`` included.

    Raises:
        ValueError: ``jobs`` < 1, or a task needs what no task makes.
        RuntimeError: tasks wait for each other in a cycle.
        Exception: the first error of a task (the tasks running beside it finish first).
    """
    if jobs < 1:
        raise ValueError(f'run_tasks: jobs must be at least 1, got {jobs}')
    results = dict(finished or {})
    todo = pending_tasks(tasks, results)
    started = time.perf_counter() if started is None else started

    def end(task: Task, result: Any, seconds: float) -> None:
        results[task.key] = result
        if task.report is not None:
            log(task.report(result, seconds))

    def ready(task: Task) -> bool:
        return all(key in results for key in task.after)

    pending, running = list(todo), {}
    workers = min(jobs, max(len(todo), 1))
    with contextlib.ExitStack() as stack:
        if workers == 1:  # in this process, one task after the other, each with its progress line
            stack.callback(torch.set_num_threads, torch.get_num_threads())  # the caller's, after
            single_thread()
        else:  # side by side, one line per start and end
            context = multiprocessing.get_context('spawn')
            pool = stack.enter_context(
                ProcessPoolExecutor(workers, mp_context=context, initializer=single_thread)
            )
        while pending or running:
            startable = [task for task in pending if ready(task)]
            if not running and not startable:
                raise RuntimeError(
                    f'run_tasks: tasks {[t.key for t in pending]} wait for tasks that never ran'
                )
            for task in startable[: workers - len(running)]:
                pending.remove(task)
                needs = {key: results[key] for key in task.after}
                start = time.perf_counter()
                if workers == 1:
                    end(task, task.function(task.job, needs, True), time.perf_counter() - start)
                    continue
                running[pool.submit(task.function, task.job, needs, False)] = (task, start)
                log(
                    f'{task.name}: started ({len(results)} of {len(tasks)} tasks done, '
                    f'{start - started:.0f} s)'
                )
            if running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    task, start = running.pop(future)
                    end(task, future.result(), time.perf_counter() - start)
    return results
