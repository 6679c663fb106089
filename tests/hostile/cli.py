"""Run the installed ``imagelint`` console script in a child process and measure it.

Peak memory comes from ``os.wait4`` (the child's own ``ru_maxrss``, measured by a bare launcher
so that pytest's own size does not leak into it), so a test asserts what the process really used; ``rlimit_as`` also caps the child's address space, so
an unbounded allocation fails the run instead of swapping the machine.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from imagelint.errors import EXIT_UNREADABLE, EXIT_USAGE

MiB = 1 << 20
_TREE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass(frozen=True)
class CliRun:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    peak_rss_bytes: int
    seconds: float

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def error_line(self) -> str:
        """The one ``imagelint: error: ...`` line; fails when stderr is anything else (a traceback...)."""
        lines = [l for l in self.stderr.splitlines() if l.strip()]
        assert len(lines) == 1, f"expected one stderr line, got: {self.stderr!r}"
        assert lines[0].startswith("imagelint: error: "), lines[0]
        assert "Traceback" not in self.output
        return lines[0]


def imagelint_command() -> list[str]:
    """The installed console script (what CI and users run)."""
    found = shutil.which("imagelint")
    return [found] if found else [sys.executable, "-m", "imagelint"]


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: str | os.PathLike | None = None,
            rlimit_as: int | None = None, timeout: float = 120.0, stdin: bytes | None = None) -> CliRun:
    return run_command([*imagelint_command(), *args], env=env, cwd=cwd, rlimit_as=rlimit_as, timeout=timeout,
                       stdin=stdin)


def run_command(command: list[str], env: dict[str, str] | None = None, cwd: str | os.PathLike | None = None,
                rlimit_as: int | None = None, timeout: float = 120.0, stdin: bytes | None = None) -> CliRun:
    args = tuple(command[1:])
    full_env = dict(os.environ)
    # The tree under test, not whichever checkout the console script was installed from.
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [_TREE, os.environ.get("PYTHONPATH", "")]))
    full_env.update(env or {})
    full_env.setdefault("NO_COLOR", "1")
    full_env.pop("GITHUB_ACTIONS", None)

    def limit() -> None:
        if rlimit_as is not None:
            resource.setrlimit(resource.RLIMIT_AS, (rlimit_as, rlimit_as))

    read_end, write_end = os.pipe()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as inp:
        if stdin is not None:
            inp.write(stdin)
            inp.seek(0)
        started = time.monotonic()
        # Through a bare launcher: a child forked straight from pytest (hundreds of MB by the end of
        # the suite) would report pytest's peak as its own ru_maxrss (Linux keeps the forking
        # process's high-water mark across exec), not what imagelint used.
        proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", _LAUNCHER, str(write_end), *command], stdout=out,
                                stderr=err, stdin=inp, env=full_env, cwd=cwd, preexec_fn=limit, pass_fds=(write_end,),
                                start_new_session=True)
        os.close(write_end)
        deadline = started + timeout
        try:
            proc.wait(timeout=max(deadline - time.monotonic(), 0))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            raise AssertionError(f"imagelint {' '.join(args)} ran longer than {timeout} s") from None
        finally:
            with os.fdopen(read_end, "rb") as pipe:
                report = pipe.read()
        seconds = time.monotonic() - started
        peak_kb, code = json.loads(report) if report else (0, proc.returncode)
        out.seek(0)
        err.seek(0)
        return CliRun(tuple(args), code, out.read().decode(errors="replace"),
                      err.read().decode(errors="replace"), peak_kb * 1024, seconds)


_LAUNCHER = r"""
import json, os, sys
out, argv = int(sys.argv[1]), sys.argv[2:]
pid = os.fork()
if pid == 0:
    os.close(out)
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
os.write(out, json.dumps([usage.ru_maxrss, os.waitstatus_to_exitcode(status)]).encode())
"""


def assert_exit(run: CliRun, code: int, *fragments: str) -> str:
    """Exit ``code`` with one error line containing every fragment; returns the line."""
    line = run.error_line()
    assert run.returncode == code, (run.returncode, run.stderr)
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    return line


def assert_unreadable(run: CliRun, *fragments: str) -> str:
    return assert_exit(run, EXIT_UNREADABLE, *fragments)


def assert_usage(run: CliRun, *fragments: str) -> str:
    return assert_exit(run, EXIT_USAGE, *fragments)


@dataclass(frozen=True)
class ApiRun:
    """``inspect_reference`` in this process, with the CLI's error mapping (exit code, one line)."""

    exit_code: int
    message: str
    facts: list


def inspect_api(ref: str, insecure: tuple[str, ...] = (), read_layers: bool = True, **options) -> ApiRun:
    from imagelint.errors import ImagelintError
    from imagelint.core.inspect import inspect_reference
    from imagelint.sources import SourceOptions

    options.setdefault("backoff", 0.001)
    options.setdefault("no_cache", True)  # never touch the user's layer cache from tests
    try:
        facts = inspect_reference(ref, SourceOptions(insecure_registries=insecure, **options), read_layers=read_layers)
    except ImagelintError as exc:
        assert "\n" not in exc.message, exc.message
        return ApiRun(exc.exit_code, exc.message, [])
    return ApiRun(0, "", facts)


def run_main(*args: str, env: dict[str, str] | None = None, cwd: str | os.PathLike | None = None) -> CliRun:
    """The console script's ``main()`` in this process: the same code path (typer app, the
    one-line error safety net, exit codes) without interpreter start-up, for the many
    small file/flag cases. Memory is not measured here (``peak_rss_bytes`` is 0)."""
    import contextlib
    import io

    from imagelint.cli import main

    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    out, err = io.StringIO(), io.StringIO()
    code = 0
    started = time.monotonic()
    try:
        os.environ.update(env or {})
        os.environ.setdefault("NO_COLOR", "1")
        os.environ.pop("GITHUB_ACTIONS", None)
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = ["imagelint", *args]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return CliRun(tuple(args), code, out.getvalue(), err.getvalue(), 0, time.monotonic() - started)
