"""The preloaded tool server (``tests/tool_server.py``) gives the run a fresh interpreter gives.

The suite runs tools through it to skip the import phase; this checks, on a training and a test
run, that a served run and a fresh ``python tools/X.py`` agree on exit status, checkpoint
weights (bit for bit) and printed results, and that a failing run fails the same way.

The training run is the session's shared ``student_run`` (served), the smallest run that still
exercises every piece of state a run carries: one iteration (an Adam step, so optimizer moments,
and a one-cycle scheduler step), a validation pass; the test pass is tools/test.py on its
checkpoint. Only the fresh-interpreter runs are made here.
"""

import os
import os.path as osp
import re

import pytest
import tool_server
from conftest import (
    REPO,
    SMALL_TOOL_RUN,
    STUDENT_RUN_CONFIG,
    STUDENT_RUN_OPTIONS,
    assert_same_nested,
    run_tool,
)

from mlkd.utils.checkpoint import load_local_checkpoint


def _both(*args: str) -> tuple:
    env = tool_server.server_env(REPO)
    return tuple(
        tool_server.run_python(list(args), cwd=REPO, env=env, fresh=fresh)
        for fresh in (False, True)
    )


def _logged_values(text: str) -> list[list[tuple[str, str]]]:
    """Losses, learning rates and metrics of every ``Epoch(...)`` line, without the timings that
    differ between any two runs."""
    timings = {'eta', 'time', 'data_time', 'memory'}
    return [
        [
            (key, value)
            for key, value in re.findall(r'(\S+): (\S+)', line.split('Epoch(')[1])
            if key not in timings
        ]
        for line in text.splitlines()
        if 'Epoch(' in line
    ]


def test_a_served_run_equals_a_fresh_interpreter_run(student_run, tmp_path):
    fresh_dir = str(tmp_path / 'fresh')
    fresh_run = tool_server.run_python(
        [
            'tools/train.py',
            STUDENT_RUN_CONFIG,
            '--work-dir',
            fresh_dir,
            '--cfg-options',
            *STUDENT_RUN_OPTIONS,
        ],
        cwd=REPO,
        env=tool_server.server_env(REPO),
        fresh=True,
    )
    assert fresh_run.returncode == 0, fresh_run.stderr[-2000:]
    served, fresh = (
        load_local_checkpoint(path)
        for path in (student_run['checkpoint'], osp.join(fresh_dir, 'epoch_1.pth'))
    )
    assert served['meta']['iter'] == 1 and served['optimizer']['state']  # Adam moments
    assert served['param_schedulers'][0]['last_step'] == 1
    for key in ('state_dict', 'optimizer', 'param_schedulers'):
        assert_same_nested(served[key], fresh[key], key)
    logs = [
        _logged_values(text) for text in (student_run['log'], fresh_run.stdout + fresh_run.stderr)
    ]
    assert len(logs[0]) == 2 and logs[0] == logs[1]  # a train and a val line
    assert any(key == 'mAP' for key, _ in logs[0][1])

    tests = _both(
        'tools/test.py',
        STUDENT_RUN_CONFIG,
        student_run['checkpoint'],
        '--work-dir',
        str(tmp_path / 'test'),
        '--cfg-options',
        *SMALL_TOOL_RUN,
    )
    assert [run.returncode for run in tests] == [0, 0], tests[0].stderr[-2000:]
    tables = [run.stdout[run.stdout.index('per-class AP') :] for run in tests]
    assert tables[0] == tables[1]


def test_a_failing_run_fails_the_same_way():
    runs = _both('tools/train.py', 'configs/no_such_config.py')
    assert runs[0].returncode == runs[1].returncode != 0
    assert runs[0].stderr.strip().splitlines()[-1] == runs[1].stderr.strip().splitlines()[-1]
    usage = _both('tools/train.py', '--no-such-flag')
    assert usage[0].returncode == usage[1].returncode == 2
    assert usage[0].stderr == usage[1].stderr


@pytest.mark.parametrize('turn', ['first', 'second'])
def test_tool_runs_of_later_tests_are_served(turn, monkeypatch):
    """The server only pays if it serves: once, pytest's per-test ``PYTEST_CURRENT_TEST`` (and
    variables torch and sklearn add in-process) made every run after the first test's differ from
    the server's environment, so each went to a fresh interpreter, and the comparison above
    passed trivially. Runs in two tests (two values of that variable), both must be served; the
    second after variables were set in this process, as calling tools/train.py's ``main``
    in-process sets ``LOCAL_RANK`` (a user's shell has no such variable), and as any in-process
    code may set another (three tool runs of the suite went to fresh interpreters that way,
    unnoticed)."""
    if turn == 'second':
        for name in ('LOCAL_RANK', 'MLKD_TEST_SET_IN_PROCESS'):
            if name not in tool_server._STARTING_ENV:
                monkeypatch.setenv(name, '0')
    out = run_tool('tools/misc/print_config.py', STUDENT_RUN_CONFIG)
    assert out.returncode == 0, out.stderr[-2000:]
    if os.environ.get('MLKD_TEST_FRESH_TOOLS') != '1':
        assert out.served, (
            turn,
            sorted(
                set(tool_server.server_env(REPO).items()) ^ set(tool_server._server.env.items())
            ),
        )


def test_a_call_time_variable_is_served_and_seen(tmp_path):
    """A run that adds a variable of ``CALL_TIME_VARIABLES`` (the checkpoint-safety runs force
    weights-only loading) is served, sees the variable, and leaves the server without it."""
    script = tmp_path / 'show.py'
    script.write_text("import os\nprint(os.environ.get('TORCH_FORCE_WEIGHTS_ONLY_LOAD'))\n")
    forced = run_tool(str(script), env={'TORCH_FORCE_WEIGHTS_ONLY_LOAD': '1'})
    plain = run_tool(str(script))
    assert (forced.stdout, plain.stdout) == ('1\n', 'None\n'), (forced.stderr, plain.stderr)
    if os.environ.get('MLKD_TEST_FRESH_TOOLS') != '1':
        assert forced.served and plain.served
