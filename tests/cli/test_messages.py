"""What the CLI says is true and said once (issue 38): one suggestion for a mistyped command,
every exit code in the top-level help, an unreadable image's reason in a redirected report."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import imagelint.errors as errors


def imagelint(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update({"IMAGELINT_NO_CACHE": "1", "NO_COLOR": "1"})
    return subprocess.run(["imagelint", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_a_mistyped_command_gets_one_suggestion_sentence():
    out = imagelint("chek")
    assert out.returncode == 2
    [line] = [ln for ln in out.stderr.splitlines() if "No such command" in ln]
    assert line.endswith("No such command 'chek'. Did you mean 'check' or 'cache'?"), line
    assert line.count("Did you mean") == 1
    [line] = [ln for ln in imagelint("target", "shw").stderr.splitlines() if "No such command" in ln]
    assert line.count("Did you mean") == 1 and "'show'" in line, line


def test_the_top_level_help_lists_every_exit_code():
    help_text = imagelint("--help").stdout
    codes = {v for k, v in vars(errors).items() if k.startswith("EXIT_") and isinstance(v, int)}
    listed = {int(m) for m in re.findall(r"^\s+(\d+)\s{2,}", help_text.split("Exit codes:", 1)[1], re.M)}
    assert codes <= listed, f"exit codes missing from imagelint --help: {sorted(codes - listed)}"
    assert "5    doctor only" in help_text


def test_a_redirected_text_report_keeps_why_an_image_was_unreadable(tmp_path):
    """``imagelint check … > report.txt`` kept only "the error is on stderr"; the file now says why."""
    out = imagelint("check", "oci-dir:missing-layout", "--driver", "535.104.05", cwd=tmp_path)
    assert out.returncode in (2, 3)
    report = out.stdout
    assert "the error is on stderr" not in report and "missing-layout" in report
    [reason] = [ln for ln in report.splitlines() if "unreadable:" in ln]
    assert len(reason.split("unreadable:", 1)[1].strip()) > 10, reason
