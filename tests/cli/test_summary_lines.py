"""Summary lines count what was looked at, once each; an unreadable image is printed once."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = f"oci-dir:{ROOT / 'examples' / 'cuda-app'}"


def cli(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    full.update({"IMAGELINT_NO_CACHE": "1", "NO_COLOR": "1", **(env or {})})
    return subprocess.run(["imagelint", *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=120)


def last_line(text: str) -> str:
    return text.strip().splitlines()[-1]


def test_lint_counts_files_not_objects(tmp_path):
    three = "\n---\n".join(textwrap.dedent(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: p{i}}}
        spec:
          containers:
          - name: c
            image: app:1
            resources: {{limits: {{nvidia.com/gpu: 1}}}}""") for i in range(3))
    (tmp_path / "pods.yaml").write_text(three + "\n")
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-base-ubuntu22.04\n")
    (tmp_path / "run.sh").write_text("#!/bin/sh\nexec python3 serve.py\n")
    (tmp_path / "notes.md").write_text("hello\n")
    r = cli("lint", "pods.yaml", "Dockerfile", "run.sh", "notes.md", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    assert last_line(r.stdout).startswith("4 file(s) (1 skipped): "), r.stdout
    assert "image(s)" not in last_line(r.stdout)


def test_lint_of_skipped_files_only_says_files(tmp_path):
    (tmp_path / "notes.md").write_text("hello\n")
    r = cli("lint", "notes.md", cwd=tmp_path)
    assert r.returncode == 0 and last_line(r.stdout).startswith("1 file(s) (1 skipped): 0 error(s)"), r.stdout


def test_unreadable_images_are_counted_and_printed_once(tmp_path):
    r = cli("check", EXAMPLE, "./missing.tar", "--driver", "550.54.15", cwd=tmp_path)
    assert r.returncode == 3
    assert last_line(r.stdout).startswith("2 image(s) (1 unreadable): "), r.stdout
    assert r.stderr.strip() == "imagelint: error: ./missing.tar: no such file or directory"
    # stdout redirected (`> report.txt`, here a pipe): the report keeps the reason (issue 38)
    assert "unreadable: ./missing.tar: no such file or directory" in r.stdout, r.stdout
    # stdout and stderr the same terminal: printed once, on stderr
    import pty

    primary, secondary = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update({"IMAGELINT_NO_CACHE": "1", "NO_COLOR": "1"})
    proc = subprocess.run(["imagelint", "check", "./missing.tar", "--driver", "550.54.15"], cwd=tmp_path, env=env,
                          stdout=secondary, stderr=subprocess.PIPE, text=True, timeout=120)
    os.close(secondary)
    shown = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(primary)
    assert proc.returncode == 3 and b"the error is on stderr" in shown and b"no such file" not in shown, shown
    # the same error in a report file keeps its message
    out = tmp_path / "report.txt"
    r = cli("check", "./missing.tar", "--format", "text", "--output", str(out), cwd=tmp_path)
    assert "no such file or directory" in out.read_text() and r.stderr.count("no such file") == 1


def test_github_format_reports_an_unreadable_image_as_its_annotation_only(tmp_path):
    r = cli("check", "./missing.tar", "--format", "github", cwd=tmp_path)
    assert r.returncode == 3 and r.stderr == ""
    assert sum("no such file" in line for line in r.stdout.splitlines()) == 1
    assert "0 image(s)" not in r.stdout and "1 image(s) (1 unreadable)" in r.stdout


# CUDA 12.4 on R470 fails on a GeForce GPU: forward compatibility is for data-centre GPUs only
# (the forward-compatibility page), and R470 is below 12.x minor-version compatibility (>= 525.60.13).
FAILING_DOCKERFILE = "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nENV NVIDIA_VISIBLE_DEVICES=all\n"


def test_reports_all_in_files_leave_the_summary_line_on_the_terminal(tmp_path):
    (tmp_path / "Dockerfile").write_text(FAILING_DOCKERFILE)
    r = cli("lint", "Dockerfile", "--driver", "470.57.02", "--gpu", "RTX 3090", "--format", "json", "--output", "r.json",
            "--format", "junit", "--output", "r.xml", cwd=tmp_path)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("imagelint: 1 file(s): 1 error(s), ") and r.stderr.count("\n") == 1, r.stderr
    # the same line the text report ends with
    text = cli("lint", "Dockerfile", "--driver", "470.57.02", "--gpu", "RTX 3090", cwd=tmp_path)
    assert r.stderr == f"imagelint: {last_line(text.stdout)}; report: r.json, r.xml\n"


def test_a_report_on_stdout_or_quiet_adds_no_summary_on_stderr(tmp_path):
    (tmp_path / "Dockerfile").write_text(FAILING_DOCKERFILE)
    on_stdout = cli("lint", "Dockerfile", "--driver", "470.57.02", "--gpu", "RTX 3090", "--format", "text", "--format", "json", "-o", "r.json",
                    cwd=tmp_path)
    assert on_stdout.returncode == 1 and on_stdout.stderr == "" and "1 error(s)" in last_line(on_stdout.stdout)
    quiet = cli("lint", "Dockerfile", "--driver", "470.57.02", "--gpu", "RTX 3090", "-q", "-o", "r.json", cwd=tmp_path)
    assert quiet.returncode == 1 and quiet.stderr == "" and quiet.stdout == ""


def test_interleaved_format_and_output_pair_as_given(tmp_path):
    """Each --output belongs to the --format just before it, wherever the formats without a file stand."""
    (tmp_path / "Dockerfile").write_text(FAILING_DOCKERFILE)
    r = cli("lint", "Dockerfile", "--driver", "470.57.02", "--gpu", "RTX 3090", "--format", "text", "--format", "json", "--output", "r.json",
            "--format", "junit", "-o", "r.xml", cwd=tmp_path)
    assert r.returncode == 1 and last_line(r.stdout).startswith("1 file(s): 1 error(s)")
    assert (tmp_path / "r.json").read_text().lstrip().startswith("{")
    assert (tmp_path / "r.xml").read_text().lstrip().startswith("<")


def test_github_annotations_carry_the_details_and_the_fix_not_a_pointer_to_a_report(tmp_path):
    """The JSON report of a CI run stays on the runner (the documented workflow never uploads it):
    annotations hold the detail lines and the fix themselves (issue 38)."""
    (tmp_path / "Dockerfile").write_text(FAILING_DOCKERFILE)
    for extra in ((), ("--format", "json", "--output", "out/imagelint.json")):
        r = cli("lint", "Dockerfile", "--driver", "470.57.02", "--gpu", "RTX 3090", "--format", "github", *extra, cwd=tmp_path)
        [il101] = [ln for ln in r.stdout.splitlines() if "title=IL101" in ln]
        assert r.returncode == 1 and "%0AFix: One of: (1)" in il101, il101
        assert "JSON report" not in r.stdout and "more detail line(s)" not in il101
