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


def test_check_and_lint_help_group_their_options():
    """~45 flags in one list (registry TLS and size limits beside the rules) are grouped as ruff's
    and trivy's help groups theirs; no flag is left out of the help."""
    for command in ("lint", "check"):
        text = imagelint(command, "--help").stdout
        sections = re.findall(r"^(\S[^\n]*):$", text, re.M)
        assert sections[:5] == ["Arguments", "Target (the node pools to judge against)", "Rules and config", "Reports",
                                "Reading images (check, lint --image: registries, the daemon, limits)"], sections
        reading = text.split("Reading images", 1)[1].split("Other options:", 1)[0]
        assert "--insecure-registry" in reading and "--max-layer-size" in reading and "--driver" not in reading
        assert "Options:" not in text


def test_shell_completion_offers_formats_rule_ids_and_gpu_names():
    def complete(words: str) -> list[str]:
        env = {**os.environ, "_IMAGELINT_COMPLETE": "complete_bash", "COMP_WORDS": words,
               "COMP_CWORD": str(len(words.split()) - 1)}
        return subprocess.run(["imagelint"], env=env, capture_output=True, text=True, timeout=60).stdout.split()

    assert complete("imagelint check --format s") == ["sarif"]
    assert complete("imagelint lint --select IL10") == [f"IL10{n}" for n in range(1, 8)]
    assert "IL101,IL302" in complete("imagelint check --ignore IL101,IL30")
    assert "H100" in complete("imagelint check --gpu H1")


def test_help_texts_hold_no_rst_markup():
    for args in (("target", "snapshot", "--help"), ("target", "show", "--help"), ("lint", "--help"), ("check", "--help")):
        assert "``" not in imagelint(*args).stdout, args
