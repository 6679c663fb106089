"""The CLI habits people bring from hadolint, yamllint, trivy and ruff, typed as they would type them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import imagelint

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = f"oci-dir:{ROOT / 'examples' / 'cuda-app'}"


def cli(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_") and k != "NO_COLOR"}
    full.update({"IMAGELINT_NO_CACHE": "1", **(env or {})})
    return subprocess.run(["imagelint", *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args", [["-h"], ["--help"], ["check", "-h"], ["lint", "-h"], ["matrix", "show", "-h"]])
def test_short_and_long_help(args):
    r = cli(*args)
    assert r.returncode == 0 and "Usage: imagelint" in r.stdout


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version(flag):
    r = cli(flag)
    from imagelint.layers.tarwalk import NATIVE

    expected = f"imagelint {imagelint.__version__} (tar scanner: {'native' if NATIVE else 'python'})"
    assert r.returncode == 0 and r.stdout.strip() == expected


def test_shell_completion_is_offered_and_completes():
    assert "--install-completion" in cli("--help").stdout
    r = cli("--show-completion", "bash", env={"SHELL": "/bin/bash"})
    assert r.returncode == 0 and "_IMAGELINT_COMPLETE" in r.stdout
    r = cli(env={"_IMAGELINT_COMPLETE": "complete_bash", "COMP_WORDS": "imagelint check --fail", "COMP_CWORD": "2"})
    assert r.stdout.split() == ["--fail-on"]
    r = cli(env={"_IMAGELINT_COMPLETE": "complete_bash", "COMP_WORDS": "imagelint ex", "COMP_CWORD": "1"})
    assert r.stdout.split() == ["explain"]


def test_color_always_never_and_no_color():
    always = cli("check", EXAMPLE, "--driver", "535.104.05", "--color", "always")
    assert "\033[" in always.stdout
    assert "\033[" in cli("check", EXAMPLE, "--color", "ALWAYS", env={"NO_COLOR": "1"}).stdout, "an explicit flag wins"
    assert "\033[" not in cli("check", EXAMPLE, "--driver", "535.104.05").stdout, "auto: not a terminal"
    assert "\033[" not in cli("check", EXAMPLE, "--color", "never").stdout
    bad = cli("check", EXAMPLE, "--color", "sometimes")
    assert bad.returncode == 2 and bad.stderr.strip() == "imagelint: error: --color must be one of auto, always, never, not 'sometimes'"


def test_quiet_prints_findings_only():
    loud = cli("check", EXAMPLE, "--driver", "535.104.05")
    quiet = cli("check", EXAMPLE, "--driver", "535.104.05", "-q")
    assert loud.returncode == quiet.returncode == 1
    assert "IL302" in quiet.stdout and "error(s)" not in quiet.stdout and "note:" not in quiet.stdout
    assert "error(s)" in loud.stdout
    clean = cli("check", EXAMPLE, "--select", "IL202", "--quiet")
    assert clean.returncode == 0 and clean.stdout == ""


def test_enums_are_case_insensitive(tmp_path):
    r = cli("check", EXAMPLE, "--driver", "535.104.05", "--fail-on", "ERROR", "--format", "JSON")
    assert r.returncode == 1 and json.loads(r.stdout)["fail_on"] == "error"
    assert cli("explain", "il101", "--format", "Markdown").stdout.startswith("## IL101")
    assert json.loads(cli("matrix", "show", "--format", "JSON", "--section", "gpus").stdout)["gpus"]
    assert cli("rules", "--format", "JSON").returncode == 0


@pytest.mark.parametrize("name,check", [
    ("report.sarif", lambda t: json.loads(t)["version"] == "2.1.0"),
    ("report.json", lambda t: json.loads(t)["format_version"] >= 1),
    ("junit.xml", lambda t: t.startswith("<?xml")),
    ("report.txt", lambda t: "error(s)" in t),
    ("report", lambda t: "error(s)" in t),
])
def test_output_without_format_follows_the_extension(name, check, tmp_path):
    (tmp_path / ".imagelint.toml").write_text("")
    (tmp_path / ".git").mkdir()
    r = cli("check", EXAMPLE, "--driver", "535.104.05", "-o", name, cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert r.stdout == "" and check((tmp_path / name).read_text())


def test_explain_is_plain_text_for_terminals():
    r = cli("explain", "IL202")
    assert r.returncode == 0 and r.stdout.startswith("IL202 cuda-stubs-on-loader-path: ")
    assert "``" not in r.stdout and "::\n" not in r.stdout and "**" not in r.stdout
    assert "LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs" in r.stdout


@pytest.mark.parametrize("rule", ["IL101", "IL102", "IL107", "IL503", "IL605"])
def test_explain_text_has_no_markdown_and_markdown_keeps_it(rule):
    """Strong marks and bullets are Markdown: the plain text shows the words, the list as indented paragraphs."""
    import re

    text = cli("explain", rule).stdout
    assert "**" not in text and "``" not in text, text
    assert not re.search(r"^\* ", text, re.M), text
    markdown = cli("explain", rule, "--format", "markdown").stdout
    assert re.search(r"^\* ", markdown, re.M) and "**" in markdown


def test_explain_keeps_the_words_of_a_list_item():
    text = cli("explain", "IL101").stdout
    assert "\n  native: the driver is at or above the release's floor" in text
    assert "\n  forward compatibility: the image's cuda-compat libcuda is loaded" in text


@pytest.mark.parametrize("fmt", ["json", "toml"])
def test_matrix_show_section_with_every_format(fmt, tmp_path):
    r = cli("matrix", "show", "--section", "gpus", "--format", fmt)
    assert r.returncode == 0
    if fmt == "json":
        doc = json.loads(r.stdout)
    else:
        import tomllib

        doc = tomllib.loads(r.stdout)
    assert set(doc) == {"meta", "gpus"} and doc["gpus"]
    bad = cli("matrix", "show", "--section", "nope", "--format", fmt)
    assert bad.returncode == 2 and "unknown section 'nope'" in bad.stderr


def test_old_overlay_spellings_still_work_with_a_note(tmp_path):
    overlay = tmp_path / "extra.toml"
    overlay.write_text('[meta]\nkind = "imagelint-matrix-overlay"\nschema_version = 1\ndata_version = "2026-12-01"\n')
    new = cli("matrix", "show", "--section", "gpus", "--matrix-overlay", str(overlay))
    old = cli("matrix", "show", "--section", "gpus", "--overlay", str(overlay))
    assert new.returncode == old.returncode == 0 and new.stdout == old.stdout
    assert new.stderr == "" and "--overlay is deprecated; write --matrix-overlay" in old.stderr
    (tmp_path / ".imagelint.toml").write_text(f'matrix-overlays = ["{overlay}"]\n')
    (tmp_path / ".git").mkdir()
    r = cli("check", EXAMPLE, "--driver", "535.104.05", cwd=tmp_path)
    assert r.returncode == 1 and "'matrix-overlays' is deprecated; write 'matrix-overlay'" in r.stderr


def test_gpus_and_drivers_list_what_the_matrix_knows_and_search():
    from imagelint.matrix import load_matrix

    m = load_matrix()
    every = json.loads(cli("gpus", "--format", "json").stdout)
    assert [g["name"] for g in every] == [r["name"] for r in m.rows("gpus")]
    hopper = cli("gpus", "HOPPER")
    assert hopper.returncode == 0 and "H100" in hopper.stdout and "Tesla T4" not in hopper.stdout
    by_alias = json.loads(cli("gpus", "nvidia-h100-80gb", "--format", "json").stdout)
    assert [g["name"] for g in by_alias] == ["NVIDIA H100"]
    assert cli("gpus", "no-such-gpu").stdout.strip() == "no GPU matches 'no-such-gpu'"
    for alias in every[0]["aliases"][:2]:
        assert cli("target", "show", "--gpu", alias).returncode == 0, "a listed name is one --gpu accepts"
    drivers = json.loads(cli("drivers", "--format", "json").stdout)
    assert {d["branch"] for d in drivers} == {r["branch"] for r in m.rows("driver_branches")}
    lts = cli("drivers", "long term")
    assert lts.returncode == 0 and "535" in lts.stdout and all("Long Term" in line for line in lts.stdout.splitlines()[1:])


def test_cache_info_and_clean_agree_in_human_sizes_and_the_limit_is_settable(tmp_path):
    cache = tmp_path / "cache"
    env = {"IMAGELINT_NO_CACHE": "0"}
    assert cli("check", EXAMPLE, "--cache-dir", str(cache), env=env).returncode in (0, 1)
    info = json.loads(cli("cache", "info", "--cache-dir", str(cache), "--format", "json").stdout)
    assert info["entries"] > 0 and info["bytes"] > 0 and info["max_bytes"] == 512 << 20
    text = cli("cache", "info", "--cache-dir", str(cache)).stdout
    assert f"{info['entries']} layer extract(s)" in text and "KiB" in text and "bytes" not in text
    cleaned = cli("cache", "clean", "--cache-dir", str(cache)).stdout
    assert cleaned.startswith(f"removed {info['entries']} layer extract(s) and image facts and "), cleaned
    assert json.loads(cli("cache", "info", "--cache-dir", str(cache), "--format", "json").stdout)["entries"] == 0
    # the limit: shown, and kept (least recently used entries go)
    small = {**env, "IMAGELINT_CACHE_MAX_SIZE": "4K"}
    assert json.loads(cli("cache", "info", "--cache-dir", str(cache), "--format", "json", env=small).stdout)["max_bytes"] == 4096
    assert cli("check", EXAMPLE, "--cache-dir", str(cache), env=small).returncode in (0, 1)
    assert json.loads(cli("cache", "info", "--cache-dir", str(cache), "--format", "json").stdout)["bytes"] <= 4096
    bad = cli("cache", "info", env={"IMAGELINT_CACHE_MAX_SIZE": "lots"})
    assert bad.returncode == 2 and "IMAGELINT_CACHE_MAX_SIZE 'lots'" in bad.stderr
