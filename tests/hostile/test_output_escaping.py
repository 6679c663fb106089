"""Output an image (or a repository file) controls is escaped in every format.

The adversary: env values, labels, a script line and file paths that carry newlines
followed by GitHub workflow commands (``::stop-commands::``, ``::error``), carriage
returns, terminal escapes (OSC 52 clipboard, OSC 0 title, CSI clear-screen), an XML-
illegal control character, Markdown/HTML and table pipes, and path characters that
are not allowed raw in a URI (space, ``#``, ``%``, ``?``).
"""

from __future__ import annotations

import json
import re
import xml.parsers.expat
from pathlib import Path
from urllib.parse import unquote

import pytest

from tests.hostile.cli import assert_exit, run_cli
from tests.support.hostile_images import image_of, publish, tar_layer
from tests.support.imagebuilder import File

INJECT = ("3\n::stop-commands::pwned\n::error file=x::injected\r\x1b]52;c;aGk=\x07\x1b[2J\x01"
          "|cell|<img src=x onerror=alert(1)>[link](http://evil.example)\u202e")
SCRIPT = "app/run me#1%25?.sh"
WORKFLOW_COMMANDS = ("group", "endgroup", "error", "warning", "notice")


@pytest.fixture(scope="module")
def image_ref(tmp_path_factory) -> str:
    env = {"CUDA_VERSION": "12.4.1", "NVIDIA_REQUIRE_CUDA": "cuda>=12.4", "CUDA_VISIBLE_DEVICES": INJECT,
           "APP_NOTE": INJECT}
    script = ("#!/bin/sh\nexport CUDA_VISIBLE_DEVICES=2\x1b]0;t\x07\nexec python app.py --device cuda:1\n").encode()
    layer = tar_layer([File(SCRIPT, script), File("usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05", b"\x7fELF" + bytes(64))])
    built = image_of([layer], config_patch={"config": {"Env": [f"{k}={v}" for k, v in env.items()],
                                                       "Entrypoint": ["/" + SCRIPT], "Labels": {"note": INJECT}}})
    return publish(built, tmp_path_factory.mktemp("escaping"))["oci-dir"]


def _no_raw_controls(text: str) -> None:
    bad = sorted({hex(ord(c)) for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f
                  or c == "\u202e"})
    assert not bad, f"raw control characters in output: {bad}"


def _no_command_lines(text: str) -> None:
    for line in text.splitlines():
        assert not line.lstrip().startswith("::"), f"a line opens a workflow command: {line[:80]!r}"


def _check(image_ref: str, out: Path, fmt: str):
    out.mkdir(exist_ok=True)
    return run_cli("check", image_ref, "--driver", "535.104.05", "--gpu", "H100", "--no-cache",
                   "--format", fmt, env={"GITHUB_STEP_SUMMARY": str(out / "summary.md")}, cwd=out, timeout=60)


def test_text_report_is_escaped(image_ref, tmp_path):
    run = _check(image_ref, tmp_path, "text")
    assert run.returncode == 1, run.stderr
    assert "IL301" in run.stdout and "IL302" in run.stdout  # the verdict is intact
    _no_raw_controls(run.stdout)
    _no_command_lines(run.stdout)
    assert "\\x1b]52" in run.stdout and "::stop-commands::pwned" in run.stdout  # shown, defused


def test_inspect_text_is_escaped(image_ref, tmp_path):
    run = run_cli("inspect", image_ref, "--no-cache", timeout=60)
    assert run.returncode == 0, run.stderr
    _no_raw_controls(run.stdout)
    _no_command_lines(run.stdout)


def test_github_annotations_have_one_line_per_command(image_ref, tmp_path):
    run = _check(image_ref, tmp_path, "github")
    assert run.returncode == 1, run.stderr
    _no_raw_controls(run.stdout)
    for line in run.stdout.splitlines():
        command = re.match(r"::(\w+)", line)
        assert command and command.group(1) in WORKFLOW_COMMANDS, f"a line that is not our command: {line[:80]!r}"
    assert "stop-commands" not in [m for m in re.findall(r"^::([\w-]+)", run.stdout, re.M)]


def test_step_summary_table_keeps_its_shape(image_ref, tmp_path):
    run = _check(image_ref, tmp_path, "github")
    assert run.returncode == 1, run.stderr
    summary = (tmp_path / "summary.md").read_text()
    _no_raw_controls(summary)
    assert "\r" not in summary
    rows = [l for l in summary.splitlines() if l.startswith("|")]
    assert len(rows) >= 4
    for row in rows:
        cells = re.split(r"(?<!\\)\|", row)
        assert len(cells) == 8, f"a cell broke the table: {row[:120]!r}"
    assert not re.search(r"(?<!\\)<img", summary) and not re.search(r"(?<!\\)\]\(http", summary), "raw HTML or a link"


def test_junit_is_well_formed(image_ref, tmp_path):
    run = _check(image_ref, tmp_path, "junit")
    assert run.returncode == 1, run.stderr
    parser = xml.parsers.expat.ParserCreate()
    parser.Parse(run.stdout.encode(), True)  # raises on ill-formed XML


def test_sarif_uris_are_uri_references(image_ref, tmp_path):
    folder = tmp_path / "svc #1 100%?"
    folder.mkdir()
    (folder / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nENV CUDA_VISIBLE_DEVICES=3\n")
    run = run_cli("check", image_ref, "--driver", "535.104.05", "--gpu", "H100", "--no-cache", "--format", "sarif",
                  "--dockerfile", str(folder / "Dockerfile"), cwd=tmp_path, timeout=60)
    assert run.returncode == 1, run.stderr
    doc = json.loads(run.stdout)
    uris = [loc["physicalLocation"]["artifactLocation"]["uri"]
            for r in doc["runs"] for res in r["results"] for loc in res.get("locations", []) if "physicalLocation" in loc]
    assert any(unquote(u).endswith("svc #1 100%?/Dockerfile") for u in uris), uris
    for uri in uris:
        assert re.fullmatch(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-F]{2})*", uri), uri


def test_lint_sarif_uri_of_a_repository_path(tmp_path):
    folder = tmp_path / "svc #1 100%"
    folder.mkdir()
    (folder / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nENV CUDA_VISIBLE_DEVICES=1\n")
    run = run_cli("lint", "--format", "sarif", "svc #1 100%/Dockerfile", cwd=tmp_path, timeout=60)
    assert run.returncode == 1, run.stderr
    uris = [loc["physicalLocation"]["artifactLocation"]["uri"] for res in json.loads(run.stdout)["runs"][0]["results"]
            for loc in res.get("locations", []) if "physicalLocation" in loc]
    assert uris and all(u == "svc%20%231%20100%25/Dockerfile" for u in uris), uris


def test_an_error_line_quoting_a_registry_is_one_printable_line(tmp_path):
    from tests.hostile.scripted_registry import Reply, ScriptedRegistry

    reg = ScriptedRegistry()
    try:
        reg.default = Reply(403, json.dumps({"errors": [{"code": "DENIED", "message": "no\x1b]0;x\x07\u202e"}]}).encode(),
                            {"Content-Type": "application/json"})
        run = run_cli("inspect", f"registry:{reg.host}/a/b:t", "--insecure-registry", reg.host,
                      env={"IMAGELINT_NO_CACHE": "1"}, timeout=30)
        assert run.returncode == 3
        line = run.error_line()
        _no_raw_controls(run.stderr)
        assert "403" in line
    finally:
        reg.stop()


def test_target_show_and_snapshot_escape_what_the_cluster_says(tmp_path):
    import tomllib

    from tests.support.fakekube import FakeKube
    from tests.deploytarget.conftest import realistic_state

    state = realistic_state()
    for node in state.nodes:
        labels = node["metadata"]["labels"]
        if "nvidia.com/gpu.product" in labels:
            labels["nvidia.com/gpu.product"] = "Tesla-T4" + INJECT + "\x7f"
    kube = FakeKube(state, tmp_path, "escaping-token-0123456789").start()
    try:
        kubeconfig = kube.write_kubeconfig(tmp_path / "kc")
        shown = run_cli("target", "show", "--cluster", "--kubeconfig", str(kubeconfig), timeout=60)
        assert shown.returncode == 0, shown.stderr
        assert "\\x1b]52" in shown.stdout
        for text in (shown.stdout, shown.stderr):
            _no_raw_controls(text)
            _no_command_lines(text)
        snap = run_cli("target", "snapshot", "--cluster", "--kubeconfig", str(kubeconfig), timeout=60)
        assert snap.returncode == 0, snap.stderr
        products = [g.get("product", "") for p in tomllib.loads(snap.stdout)["pool"] for g in p.get("gpus", [])]
        assert any(INJECT in p for p in products), products  # kept exactly, as a valid TOML string
    finally:
        kube.stop()


def test_matrix_show_escapes_what_a_matrix_file_says(tmp_path):
    # A matrix may come from a cluster's ConfigMap (--matrix cluster): its strings are data.
    from imagelint.matrix.loader import shipped_data_file, shipped_versions

    text = shipped_data_file(f"{shipped_versions()[-1]}.toml").read_text()
    hostile = text.replace('name = "Tesla V100"', 'name = "Tesla V100\\u001b]0;owned\\u0007\\n::error::x"', 1)
    assert hostile != text
    path = tmp_path / "m.toml"
    path.write_text(hostile)
    run = run_cli("matrix", "show", str(path), "--section", "gpus", env={"IMAGELINT_NO_CACHE": "1"}, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "\\x1b]0;owned" in run.stdout
    _no_raw_controls(run.stdout)
    _no_command_lines(run.stdout)


def test_doctor_text_escapes_what_pods_and_events_say(tmp_path):
    from tests.doctor.clusters import clone, event, healthy_state, pod
    from tests.support.fakekube import FakeKube

    state = clone(healthy_state())
    message = "0/3 nodes are available: 1 Insufficient nvidia.com/gpu." + INJECT
    state.pods.append(pod("ml", "evil-0", node=None, phase="Pending", gpus=1, unschedulable=message))
    state.events.append(event("ml", "Pod", "evil-0", "FailedScheduling", message))
    kube = FakeKube(state, tmp_path, "doctor-escaping-token-0123456789").start()
    try:
        run = run_cli("doctor", "--cluster", "--kubeconfig", str(kube.write_kubeconfig(tmp_path / "kc")), "--verbose",
                      timeout=60)
        assert run.returncode == 1, run.stderr
        assert "evil-0" in run.stdout
        for text in (run.stdout, run.stderr):
            _no_raw_controls(text)
            _no_command_lines(text)
    finally:
        kube.stop()


# Lone surrogates: legal JSON string escapes (an image config is JSON) that no UTF-8 writer can encode.
SURROGATES = "a\udc80b\ud800"


@pytest.fixture(scope="module")
def surrogate_image_ref(tmp_path_factory) -> str:
    env = [f"CUDA_VERSION=12.4.1", "NVIDIA_REQUIRE_CUDA=cuda>=12.4", f"CUDA_VISIBLE_DEVICES=3{SURROGATES}",
           f"APP{SURROGATES}=v{SURROGATES}"]
    layer = tar_layer([File("app/run\udc80.sh", b"#!/bin/sh\nexport CUDA_VISIBLE_DEVICES=2\n"),
                       File("usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05", b"\x7fELF" + bytes(64))])
    built = image_of([layer], config_patch={"config": {"Env": env, "Entrypoint": ["/app/run\udc80.sh"],
                                                       "Labels": {f"note{SURROGATES}": SURROGATES}}})
    return publish(built, tmp_path_factory.mktemp("surrogates"))["oci-dir"]


def test_every_report_writer_encodes_lone_surrogates(surrogate_image_ref, tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nENV CUDA_VISIBLE_DEVICES=3\n")
    files = {"text": "r.txt", "json": "r.json", "sarif": "r.sarif", "github": "r.gh", "junit": "r.xml"}
    formats = [arg for fmt, name in files.items() for arg in ("--format", f"{fmt}={name}")]
    run = run_cli("check", surrogate_image_ref, "--driver", "535.104.05", "--gpu", "H100", "--no-cache",
                  "--dockerfile", "Dockerfile", *formats, env={"GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")},
                  cwd=tmp_path, timeout=60)
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.output and "error:" not in run.stderr, run.stderr
    for fmt, name in files.items():
        text = (tmp_path / name).read_bytes().decode("utf-8")  # strict: every writer wrote valid UTF-8
        assert "\\udc80" in text, (fmt, text[:300])  # what was given, escaped, not dropped
    json.loads((tmp_path / "r.json").read_text())
    json.loads((tmp_path / "r.sarif").read_text())
    xml.parsers.expat.ParserCreate().Parse((tmp_path / "r.xml").read_bytes(), True)
    (tmp_path / "summary.md").read_bytes().decode("utf-8")
    for fmt in files:  # and on stdout
        sarif_only = ("--dockerfile", "Dockerfile") if fmt == "sarif" else ()
        shown = run_cli("check", surrogate_image_ref, "--driver", "535.104.05", "--gpu", "H100", "--no-cache",
                        *sarif_only, "--format", fmt, cwd=tmp_path, timeout=60)
        assert shown.returncode == 1 and "Traceback" not in shown.output, (fmt, shown.stderr)
    for args in (("inspect",), ("inspect", "--format", "json")):
        shown = run_cli(*args, surrogate_image_ref, "--no-cache", timeout=60)
        assert shown.returncode == 0 and "Traceback" not in shown.output, (args, shown.stderr)
        assert "\\udc80" in shown.stdout, args


def test_a_report_path_that_is_a_fifo_or_device_is_refused_at_once(surrogate_image_ref, tmp_path):
    import os

    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)
    for target in (str(fifo), "/dev/zero"):
        run = run_cli("check", surrogate_image_ref, "--driver", "535.104.05", "--no-cache", "--deadline", "60",
                      "--format", f"json={target}", cwd=tmp_path, timeout=30)
        assert_exit(run, 4, f"cannot write {target}: not a regular file")
    # The standard streams by name are what a user asks for on purpose.
    run = run_cli("check", surrogate_image_ref, "--driver", "535.104.05", "--no-cache", "--format", "json=/dev/stdout",
                  cwd=tmp_path, timeout=60)
    assert run.returncode == 1 and json.loads(run.stdout)["results"], run.stderr
