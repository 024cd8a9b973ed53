"""Run ``python tools/X.py ARGS`` without paying the interpreter's import phase every time.

Each tool run in a fresh interpreter first imports torch, mmengine, mmpretrain and mlkd: about
4 s of CPU, the same for every run and about a third of the suite's time. The server below is a
process that imports them once and then, per request, **forks**: the child sets ``sys.argv``,
the working directory, the environment and ``sys.path[0]`` as ``python SCRIPT`` would, redirects
its stdout/stderr to files, and runs the unmodified script as ``__main__`` (``runpy``). The
script's own code, its argument parsing, its exit status and its output are therefore the
user's; only the already-imported modules are shared: torch, mmengine, mmpretrain, mlkd, and two
that most tool runs import anyway and whose import has no side effect on a run (sklearn.datasets,
the source of MultiDigits' scans, about 1 s; matplotlib without pyplot, so no backend is chosen).
The server's state is never touched by tests: it only forks.

Where that could differ from a fresh interpreter, a run is not served:
- a request whose environment differs from the server's (beyond ``PYTHONPATH``, which is the
  same checkout, and the variables of ``CALL_TIME_VARIABLES``, which are read at each call and
  never at import) runs in a fresh interpreter, since import-time settings may read it;
- ``MLKD_TEST_FRESH_TOOLS=1`` runs every tool in a fresh interpreter (the slow, literal mode);
- ``tests/tools/test_tool_server.py`` runs a training and a test tool both ways and compares
  the checkpoints bit for bit and the printed tables.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile

#: Runs in the server process: import the heavy modules once, then fork per request.
SERVER = r"""
import json, os, runpy, sys, traceback
import torch, mmengine.runner, mmpretrain.models, mlkd, mlkd.utils.compat  # noqa: F401
import mlkd.models, mlkd.datasets, mlkd.evaluation, mlkd.engine  # noqa: F401
import sklearn.datasets, matplotlib  # noqa: F401
sys.stdout.write('ready\n'); sys.stdout.flush()
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            out = os.open(request['stdout'], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            err = os.open(request['stderr'], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(out, 1); os.dup2(err, 2)
            sys.stdin.close()
            os.chdir(request['cwd'])
            # The request's environment is the server's (or it would not be served) but for
            # variables read at call time; the server's own keeps what its imports added, as a
            # fresh interpreter's would.
            os.environ.update(request['env'])
            for name in request['unset']:
                os.environ.pop(name, None)
            script = request['args'][0]
            sys.argv = list(request['args'])
            sys.path[0] = os.path.dirname(os.path.abspath(script))
            try:
                runpy.run_path(script, run_name='__main__')
                code = 0
            except SystemExit as stop:
                if stop.code is None:
                    code = 0
                elif isinstance(stop.code, int):
                    code = stop.code
                else:
                    print(stop.code, file=sys.stderr); code = 1
            except BaseException:
                traceback.print_exc(); code = 1
        finally:
            try:
                import atexit, logging
                atexit._run_exitfuncs(); logging.shutdown()  # as an interpreter's exit does
                sys.stdout.flush(); sys.stderr.flush()
            finally:
                os._exit(code)
    sys.stdout.write(json.dumps(dict(pid=pid)) + '\n'); sys.stdout.flush()
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(json.dumps(dict(status=os.waitstatus_to_exitcode(status))) + '\n')
    sys.stdout.flush()
"""


class ToolServer:
    """One preloaded interpreter per test process; :meth:`run` mirrors ``subprocess.run``."""

    def __init__(self, env: dict):
        self.env = dict(env)
        self.process = subprocess.Popen(
            [sys.executable, '-c', SERVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
            env=self.env,
        )
        self._pending = b''
        if self._readline(timeout=300) != 'ready':
            raise RuntimeError('the tool server did not start')

    def _readline(self, timeout: float | None = None) -> str | None:
        """The server's next line, or None when ``timeout`` passes first."""
        fd = self.process.stdout.fileno()
        while b'\n' not in self._pending:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                raise RuntimeError('the tool server exited')
            self._pending += chunk
        line, self._pending = self._pending.split(b'\n', 1)
        return line.decode()

    def serves(self, env: dict) -> bool:
        def at_import(variables: dict) -> dict:
            return {k: v for k, v in variables.items() if k not in CALL_TIME_VARIABLES}

        return self.process.poll() is None and at_import(env) == at_import(self.env)

    def run(
        self, args: list[str], cwd: str, env: dict, timeout: float
    ) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory() as tmp:
            out, err = os.path.join(tmp, 'stdout'), os.path.join(tmp, 'stderr')
            unset = [k for k in CALL_TIME_VARIABLES if k not in env]
            request = dict(args=list(args), cwd=cwd, env=env, unset=unset, stdout=out, stderr=err)
            self.process.stdin.write((json.dumps(request) + '\n').encode())
            pid = json.loads(self._readline())['pid']
            line = self._readline(timeout)
            if line is None:
                os.kill(pid, signal.SIGKILL)
                self._readline()
                raise subprocess.TimeoutExpired([sys.executable, *args], timeout)
            status = json.loads(line)['status']
            with open(out, errors='replace') as f_out, open(err, errors='replace') as f_err:
                stdout, stderr = f_out.read(), f_err.read()
        return subprocess.CompletedProcess([sys.executable, *args], status, stdout, stderr)

    def close(self) -> None:
        """Stop the server. It waits for requests on its stdin, whose write end a process forked
        from the test process (a DataLoader worker a test left alive) also holds, so that closing
        ours may not end it: it is terminated, having nothing to finish."""
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.terminate()
            self.process.wait(timeout=30)


_server: ToolServer | None = None


def run_python(
    args: list[str], cwd: str, env: dict, timeout: float = 600, fresh: bool = False
) -> subprocess.CompletedProcess:
    """``subprocess.run([python, *args], cwd=cwd, env=env, capture_output=True, text=True)``,
    served by the preloaded interpreter where that cannot differ (see the module docstring). The
    result's ``served`` attribute says which way it ran."""
    global _server
    if not (fresh or os.environ.get('MLKD_TEST_FRESH_TOOLS') == '1' or not args[0].endswith('.py')):
        if _server is None:
            _server = ToolServer(server_env(cwd))
        if _server.serves(env):
            completed = _server.run(args, cwd, env, timeout)
            completed.served = True
            return completed
    completed = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env
    )
    completed.served = False  # tests check that runs are served where they should be
    return completed


#: Variables read only when a function runs, never at import, so a forked child that sets them
#: (it takes the request's environment) behaves as a fresh interpreter started with them:
#: ``torch.load`` reads TORCH_FORCE_WEIGHTS_ONLY_LOAD at every call.
CALL_TIME_VARIABLES = ('TORCH_FORCE_WEIGHTS_ONLY_LOAD',)
#: The environment the session started with: the user's shell's, and conftest's
#: OMP_NUM_THREADS (set before it imports this module, before any test runs).
_STARTING_ENV = dict(os.environ)


def server_env(repo: str) -> dict:
    """The environment of a plain tool run: the one the session started with, with the checkout
    on the path.

    Not this process's current one: code run *inside* the test process changes it as a side
    effect, and a user's shell has none of that. pytest names the running test in
    PYTEST_CURRENT_TEST; tools/train.py's and tools/test.py's ``main`` set LOCAL_RANK when a test
    calls them in-process; importing torch and sklearn adds their own variables, which a fresh
    interpreter adds itself. Passed on, any of them made the request differ from the server's
    environment, and every later run of that test process went to a fresh interpreter (about 5 s
    of CPU each) without failing anything.
    """
    return {**_STARTING_ENV, 'PYTHONPATH': repo}


def close() -> None:
    if _server is not None:
        _server.close()
