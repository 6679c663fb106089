"""Issue 39, cause 2: work bounded by the input's size, asserted by counting work (steps, calls,
lines examined) or in a memory-capped child process, never by the clock."""

from __future__ import annotations

import hashlib
import json
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from imagelint.static import gitignore
from tests.hostile.cli import MiB, assert_usage, run_cli, run_main
from tests.hostile.test_audit_merge import _parts, _write

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


# --- gitignore: no backtracking ----------------------------------------------------------------------


def test_a_pattern_of_many_stars_is_matched_in_steps_linear_in_the_name() -> None:
    line = "*a*a*a*a*a*a*a*a*a*a*a*b"
    (pattern,) = gitignore.parse_patterns(line + "\n")
    assert pattern.regex is None, "a pattern of several wildcard runs must not become a backtracking regex"
    for length in (48, 480, 4800):
        matched, steps = gitignore.wildmatch(pattern.tokens, "a" * length)
        assert not matched
        assert steps <= (length + 1) * (2 * len(pattern.tokens) + 2), steps
    assert pattern.matches("a" * 47 + "b", False)


_PATTERN_CHARS = st.sampled_from(["a", "b", "/", "*", "**", "?", "[ab]", "[!a]", "\\*", "[", "**/", "/**"])


@given(st.lists(_PATTERN_CHARS, min_size=1, max_size=8).map("".join), st.text(alphabet="ab/*[", max_size=10))
@FUZZ
def test_the_automaton_matches_what_the_gitignore_regex_matches(pattern: str, name: str) -> None:
    """The regex translation (checked against git check-ignore in test_gitignore.py) is the reference."""
    regex = re.compile(gitignore._wildmatch_regex(gitignore._wildmatch_tokens(pattern)), re.DOTALL)
    assert gitignore.wildmatch(gitignore._wildmatch_tokens(pattern), name)[0] == (regex.fullmatch(name) is not None)


def test_lint_of_a_tree_with_the_hostile_ignore_line_finishes(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("*a*a*a*a*a*a*a*a*a*a*a*b\n")
    # A lint candidate (a manifest), so its name is matched against the ignore line.
    (tmp_path / ("a" * 48 + ".yaml")).write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n"
                                                 "spec: {containers: [{name: c, image: ubuntu}]}\n")
    (tmp_path / "Dockerfile").write_text("FROM ubuntu\n")
    # Before: the regex ran for minutes holding the GIL (not even the --deadline watchdog could run).
    run = run_cli("lint", ".", "--deadline", "20", cwd=tmp_path, timeout=60)
    assert run.returncode == 0, run.output


# --- git index v4: linear in the file ------------------------------------------------------------------


def _index_v4(names: int) -> bytes:
    """An index whose every path is the previous one plus a byte (prefix compression: strip 0)."""
    out = bytearray(b"DIRC" + struct.pack(">II", 4, names))
    for n in range(names):
        out += struct.pack(">10I", 0, 0, 0, 0, 0, 0, 0o100644, 0, 0, 0) + b"\0" * 20 + struct.pack(">H", min(n + 1, 0xFFF))
        out += b"\x00" + b"a" + b"\0"
    return bytes(out + hashlib.sha1(out).digest())


def test_an_index_of_ever_longer_names_is_read_in_memory_linear_in_its_size(tmp_path: Path) -> None:
    git = tmp_path / ".git"
    git.mkdir()
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    data = _index_v4(40_000)  # 2.5 MiB; its names together are 800 MB
    assert len(data) < 3 * MiB
    (git / "index").write_bytes(data)
    code = ("import sys; from imagelint.static.gitignore import tracked_paths; "
            f"print(sorted(tracked_paths({str(git)!r}, {{'a' * 5, 'a' * 40000, 'b'}})))")
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (400 * MiB, 400 * MiB))

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, preexec_fn=cap,
                          env={"PYTHONPATH": str(Path(__file__).resolve().parents[2]), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.strip() == repr(sorted(["a" * 5, "a" * 40000]))


# --- apply_overlay: one pass -------------------------------------------------------------------------------


def test_an_overlay_is_applied_with_one_key_per_row(monkeypatch: pytest.MonkeyPatch) -> None:
    from imagelint.matrix import loader
    from imagelint.matrix.loader import apply_overlay, load_matrix

    base = load_matrix(None)
    rows = 3000
    overlay = ('[meta]\nkind = "imagelint-matrix-overlay"\nschema_version = 1\ndata_version = "2030-01-02"\n\n'
               + "".join(f'[[gpus]]\nname = "Site GPU {n}"\naliases = []\ncompute_capability = "8.0"\nfamily = "ampere"\nbrand = "Nvidia"\n'
                         f'brand_confidence = "uncertain"\nkind = "datacenter"\ndatacenter = true\nsource = "site"\n\n'
                         for n in range(rows)))
    calls = 0
    real = loader.row_key

    def counting(section: str, row: object) -> tuple:
        nonlocal calls
        calls += 1
        return real(section, row)  # type: ignore[arg-type]

    monkeypatch.setattr(loader, "row_key", counting)
    merged = apply_overlay(base, overlay, "site.toml")
    existing = sum(len(r) for r in base.sections.values())
    assert len(merged.rows("gpus")) == len(base.rows("gpus")) + rows
    assert calls <= existing + rows, calls  # before: a rescan of the section per row, 3000 × (gpus + n)


# --- per-file hits: the first N examined, the rest counted ------------------------------------------------


def test_a_script_of_millions_of_gpu_flags_examines_a_bounded_number_of_lines() -> None:
    from imagelint.facts.textscan import MAX_HIT_LINES, TextFactsScanner

    data = b"#!/bin/sh\n" + b"python train.py --gpu 1\n" * (MAX_HIT_LINES + 50_000)
    scanner = TextFactsScanner()
    scanner.begin("/entrypoint.sh", len(data))
    scanner.feed(data)
    result = scanner.result()
    assert scanner.lines_matched == MAX_HIT_LINES
    assert result.get("partial") is True
    assert any("50000 more lines holding a GPU keyword were not examined" in n
               for n in result["notes"]), result.get("notes")
    exact = TextFactsScanner()  # at the limit: every line examined, nothing said
    data = b"#!/bin/sh\n" + b"python train.py --gpu 1\n" * MAX_HIT_LINES
    exact.begin("/entrypoint.sh", len(data))
    exact.feed(data)
    assert exact.lines_matched == MAX_HIT_LINES
    assert not any("not examined" in n for n in exact.result().get("notes", ()))


# --- audit merge: shard counts are checked before use ------------------------------------------------------


@pytest.mark.parametrize("count", [0, 10**12, -1])
def test_a_part_claiming_an_absurd_shard_count_is_one_line(tmp_path: Path, count: int) -> None:
    doc = json.loads(Path(_write(tmp_path, "p.json", _parts(tmp_path)[0])).read_text())
    doc["shard"] = {"index": 0, "count": count}
    name = _write(tmp_path, "part0.json", doc)
    assert_usage(run_main("audit", "merge", name), "shard count outside 1..10000")


def test_a_part_claiming_an_index_past_its_count_is_one_line(tmp_path: Path) -> None:
    parts = [json.loads(Path(_write(tmp_path, f"p{i}.json", p)).read_text()) for i, p in enumerate(_parts(tmp_path))]
    parts[1]["shard"]["index"] = 7
    names = [_write(tmp_path, f"part{i}.json", d) for i, d in enumerate(parts)]
    assert_usage(run_main("audit", "merge", *names), "part1.json claims shard index 7 of 2")
