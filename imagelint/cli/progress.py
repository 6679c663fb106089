"""The progress line: on stderr, only for people (a terminal, not CI), only for reads over a second.

    with progress_line(quiet=quiet):
        run = run_check(...)

A thread polls ``imagelint.progress`` four times a second and, once an image has been read
for ``IMAGELINT_PROGRESS_DELAY`` seconds (default 1), rewrites one line:
``imagelint: reading registry:ghcr.io/org/app:1 … 1.4 GiB inflated, 12 s``; the line is erased
when reading ends, so the report and the error lines are never mixed with it. Never shown when
stderr is not a terminal (CI logs, pipes, files), under a CI environment, or with ``--quiet``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import IO, Iterator, Mapping

from imagelint.lazyre import lazy_pattern
from imagelint.untrusted import parse_float

# Set by the CI systems people use (GitHub Actions, GitLab, Buildkite, Jenkins, Azure, CircleCI, Travis…).
CI_VARIABLES = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "JENKINS_URL", "TF_BUILD", "CIRCLECI", "TRAVIS")
_CONTROL = lazy_pattern(r"[\x00-\x1f\x7f-\x9f]")


def wanted(stream: IO[str], environ: Mapping[str, str], quiet: bool = False) -> bool:
    isatty = getattr(stream, "isatty", None)
    in_ci = any(environ.get(v, "").strip().lower() not in ("", "0", "false") for v in CI_VARIABLES)
    return not quiet and bool(isatty and isatty()) and not in_ci


def line_for(subject: str, elapsed: float, inflated: int, width: int, waiting: str | None = None) -> str:
    from imagelint.sizes import human_size

    # Before the first layer byte, what is happening is the wait for a server: say that.
    doing = f"waiting for {_CONTROL.sub('?', waiting)}" if waiting and not inflated else f"{human_size(inflated)} inflated"
    text = f"imagelint: reading {_CONTROL.sub('?', subject)} … {doing}, {int(elapsed)} s"
    return text if len(text) <= width else text[: max(width - 1, 10)] + "…"


@contextlib.contextmanager
def progress_line(stream: IO[str] | None = None, environ: Mapping[str, str] | None = None,
                  quiet: bool = False) -> Iterator[None]:
    stream = stream or sys.stderr
    environ = os.environ if environ is None else environ
    if not wanted(stream, environ, quiet):
        yield
        return
    from imagelint import progress

    try:
        delay = parse_float(environ.get("IMAGELINT_PROGRESS_DELAY", "1"), "IMAGELINT_PROGRESS_DELAY", minimum=0, maximum=3600)
    except ValueError:
        delay = 1.0
    stop = threading.Event()
    shown = threading.Event()

    def clear() -> None:
        if shown.is_set():
            stream.write("\r\033[K")
            stream.flush()
            shown.clear()

    def run() -> None:
        while not stop.wait(0.25):
            subject, elapsed, inflated = progress.snapshot()
            if subject is None or elapsed < delay:
                clear()
                continue
            width = _terminal_width()
            stream.write("\r\033[K" + line_for(subject, elapsed, inflated, width, progress.waiting_for()))
            stream.flush()
            shown.set()

    thread = threading.Thread(target=run, name="imagelint-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(1.0)
        clear()


def _terminal_width() -> int:
    """The line's width: shutil's answer (COLUMNS, else the terminal's, else 100), less one.
    Imported here: only a run that draws the line (stderr a terminal) pays for shutil."""
    import shutil

    return shutil.get_terminal_size((100, 24)).columns - 1
