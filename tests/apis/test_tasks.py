"""mlkd.apis.tasks: a task graph run in dependency order, resumable, one thread per task.

In this process (one job) here; several worker processes are exercised by tools/demo.py's test
(tests/tools/test_demo.py, ``--jobs 2``).
"""

import pytest
import torch

from mlkd.apis.tasks import Task, pending_tasks, run_tasks

CALLS = []


def record(job, needs, live_progress):
    """A task function: what it was given, and its result (its name and its needs' results)."""
    CALLS.append((job, dict(needs), live_progress, torch.get_num_threads()))
    return job + '(' + ','.join(needs[k] for k in sorted(needs)) + ')'


def _graph(order=None):
    """teacher -> cache -> KD; student alone; a second cache nobody unfinished needs."""
    tasks = {
        'teacher': Task('teacher', record, 'teacher', report=lambda r, s: f'done {r}'),
        'cache': Task('cache', record, 'cache', after=('teacher',), wanted=False),
        'KD': Task('KD', record, 'KD', after=('teacher', 'cache')),
        'student': Task('student', record, 'student'),
        'spare': Task('spare', record, 'spare', wanted=False),
    }
    return [tasks[k] for k in order or tasks]


def test_tasks_run_after_what_they_need_with_its_results():
    CALLS.clear()
    lines = []
    caller_threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        # Given in an order that does not respect the dependencies: KD still waits for the cache.
        results = run_tasks(
            _graph(['KD', 'student', 'cache', 'teacher', 'spare']), jobs=1, log=lines.append
        )
        assert torch.get_num_threads() == 2  # the caller's thread count is given back
    finally:
        torch.set_num_threads(caller_threads)
    assert [call[0] for call in CALLS] == ['student', 'teacher', 'cache', 'KD']
    assert results['KD'] == 'KD(cache(teacher()),teacher())'
    assert all(live and threads == 1 for _, _, live, threads in CALLS)  # alone, one thread
    assert 'spare' not in results  # wanted by nobody
    assert lines == ['done teacher()']  # only tasks with a report print a line


def test_finished_tasks_are_reused_and_what_only_they_needed_is_skipped():
    CALLS.clear()
    finished = {'teacher': 'T', 'KD': 'K'}
    results = run_tasks(_graph(), jobs=1, finished=finished, log=lambda line: None)
    assert [call[0] for call in CALLS] == ['student']  # the cache only served KD
    assert results == {'teacher': 'T', 'KD': 'K', 'student': 'student()'}
    assert [t.key for t in pending_tasks(_graph(), {'teacher': 'T'})] == ['cache', 'KD', 'student']


def test_impossible_graphs_are_refused_before_anything_runs():
    CALLS.clear()
    with pytest.raises(ValueError, match=r"task KD needs \['cache'\], which no task makes"):
        run_tasks([t for t in _graph() if t.key != 'cache'], jobs=1)
    with pytest.raises(ValueError, match='two tasks share a key'):
        run_tasks(_graph() + [Task('KD', record, 'again')], jobs=1)
    with pytest.raises(ValueError, match='jobs must be at least 1'):
        run_tasks(_graph(), jobs=0)
    cycle = [Task('a', record, 'a', after=('b',)), Task('b', record, 'b', after=('a',))]
    with pytest.raises(RuntimeError, match="tasks \\['a', 'b'\\] wait for tasks that never ran"):
        run_tasks(cycle, jobs=1)
    assert CALLS == []
