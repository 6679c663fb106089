"""The progress line: for people at a terminal only, after a second, erased when reading ends."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import time
from pathlib import Path

from imagelint import progress
from imagelint.cli.progress import line_for, progress_line, wanted

ROOT = Path(__file__).resolve().parents[2]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_shown_after_the_delay_then_erased():
    term = Terminal()
    with progress_line(term, {"IMAGELINT_PROGRESS_DELAY": "0.3"}):
        progress.reading("registry:ghcr.io/org/app:1")
        progress.inflated(3 << 20)
        time.sleep(0.15)
        assert term.getvalue() == "", "nothing in the first moments of a read"
        time.sleep(0.7)
        shown = term.getvalue()
        progress.reading(None)
        time.sleep(0.4)
    assert "imagelint: reading registry:ghcr.io/org/app:1 … 3.0 MiB inflated," in shown
    assert term.getvalue().endswith("\r\033[K"), "the line is erased, the report starts on a clean line"


def test_never_in_ci_pipes_or_quiet():
    assert wanted(Terminal(), {}) is True
    assert wanted(Terminal(), {"CI": "true"}) is False and wanted(Terminal(), {"GITHUB_ACTIONS": "true"}) is False
    assert wanted(io.StringIO(), {}) is False and wanted(Terminal(), {}, quiet=True) is False
    assert "\x1b" not in line_for("bad\x1b[2Jname", 1.0, 0, 200)


def _run_with_tty_stderr(*args: str, env: dict) -> tuple[int, str, str]:
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(["imagelint", *args], stdout=subprocess.PIPE, stderr=slave, env=env)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        out, _ = proc.communicate(timeout=120)
        return proc.returncode, out.decode(), b"".join(chunks).decode(errors="replace")
    finally:
        os.close(master)


def test_a_terminal_sees_it_and_stdout_never_does(tmp_path):
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS")}
    base.update({"IMAGELINT_NO_CACHE": "1", "IMAGELINT_PROGRESS_DELAY": "0", "NO_COLOR": "1"})
    ref = f"oci-dir:{ROOT / 'examples' / 'cuda-app'}"
    code, out, err = _run_with_tty_stderr("check", ref, "--format", "json", env=base)
    assert code in (0, 1) and out.lstrip().startswith("{") and "reading" not in out
    code, _, err_ci = _run_with_tty_stderr("check", ref, env={**base, "CI": "true"})
    assert "imagelint: reading" not in err_ci
