"""The console entry ``imagelint.__main__:run``: the exit status Python would give, output flushed in full,
quiet when the reader goes away, atexit handlers run, and no interpreter teardown.

Everything runs through the real installed ``imagelint`` script (as CI and pre-commit run it), with
PYTHONUNBUFFERED removed so stdout is block-buffered as on a user's machine.
"""

from __future__ import annotations

import base64
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from imagelint.__main__ import exit_status
from tests.support.registry import make_ca

ROOT = Path(__file__).resolve().parents[2]
FINDING = 'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nENV NVIDIA_VISIBLE_DEVICES=all\nCMD ["python3"]\n'  # IL303 (info)
CLEAN = "FROM ubuntu:22.04\nCMD [\"bash\"]\n"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")}
    env["IMAGELINT_CACHE_DIR"] = str(tmp_path / "cache")
    env.update(extra)
    return env


def _script() -> str:
    path = shutil.which("imagelint")
    assert path, "the imagelint console script is not installed (pip install -e '.[test]')"
    return path


def imagelint(tmp_path: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:  # type: ignore[no-untyped-def]
    return subprocess.run([_script(), *args], capture_output=True, text=True, timeout=120, env=_env(tmp_path), **kwargs)


def test_the_console_script_is_the_fast_exit_entry() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["imagelint"]
    assert declared == "imagelint.__main__:run"
    installed = [e.value for e in importlib.metadata.entry_points(group="console_scripts") if e.name == "imagelint"]
    assert installed == [declared], "the installed script is stale: pip install -e '.[test]'"


def test_exit_codes_through_the_installed_script(tmp_path) -> None:
    (tmp_path / "Dockerfile").write_text(FINDING)
    (tmp_path / "clean").mkdir()
    (tmp_path / "clean" / "Dockerfile").write_text(CLEAN)

    clean = imagelint(tmp_path, "lint", str(tmp_path / "clean" / "Dockerfile"))
    assert clean.returncode == 0, clean.stderr
    info = imagelint(tmp_path, "lint", str(tmp_path / "Dockerfile"))
    assert info.returncode == 0 and "IL303" in info.stdout  # info findings, fail-on error
    findings = imagelint(tmp_path, "lint", str(tmp_path / "Dockerfile"), "--fail-on", "info")
    assert findings.returncode == 1 and "IL303" in findings.stdout
    usage = imagelint(tmp_path, "lint", str(tmp_path / "Dockerfile"), "--fail-on", "sometimes")
    assert usage.returncode == 2 and "imagelint: error: --fail-on" in usage.stderr
    unknown_flag = imagelint(tmp_path, "lint", "--no-such-flag", str(tmp_path / "Dockerfile"))
    assert unknown_flag.returncode == 2  # click's usage error
    unreadable = imagelint(tmp_path, "inspect", "registry:127.0.0.1:9/x/y:1", "--timeout", "1")
    assert unreadable.returncode == 3 and unreadable.stderr.startswith("imagelint: error:")
    version = imagelint(tmp_path, "--version")
    assert version.returncode == 0 and version.stdout.startswith("imagelint ")
    for run in (clean, info, findings, usage, unknown_flag, unreadable, version):
        assert "Traceback" not in run.stderr and "Exception ignored" not in run.stderr, run.stderr


def test_python_dash_m_uses_the_same_entry(tmp_path) -> None:
    (tmp_path / "Dockerfile").write_text(FINDING)
    run = subprocess.run([sys.executable, "-m", "imagelint", "lint", str(tmp_path / "Dockerfile"), "--fail-on", "info"],
                         capture_output=True, text=True, timeout=120, env=_env(tmp_path))
    assert run.returncode == 1 and "IL303" in run.stdout


def _many_dockerfiles(tmp_path: Path, count: int) -> list[str]:
    paths = []
    for i in range(count):
        path = tmp_path / "files" / f"svc{i:04d}" / "Dockerfile"
        path.parent.mkdir(parents=True)
        path.write_text(FINDING)
        paths.append(str(path))
    return paths


def test_a_large_report_to_a_pipe_arrives_complete(tmp_path) -> None:
    """Block-buffered stdout, then os._exit: whatever is still in the buffer must be flushed first."""
    paths = _many_dockerfiles(tmp_path, 150)
    run = imagelint(tmp_path, "lint", "--format", "json", *paths)
    assert run.returncode == 0, run.stderr
    assert len(run.stdout) > 64 * 1024, "big enough to pass through the pipe buffer more than once"
    report = json.loads(run.stdout)  # complete: a truncated document does not parse
    subjects = {r["image"]["ref"] for r in report["results"]}
    assert subjects == set(paths)


def _to_a_closed_reader(tmp_path: Path, *args: str) -> tuple[int, str]:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone away before imagelint writes (``imagelint ... | head -0``)
    try:
        done = subprocess.run([_script(), *args], stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120,
                              env=_env(tmp_path))
    finally:
        os.close(write_end)
    return done.returncode, done.stderr


@pytest.mark.parametrize("count", [1, 150], ids=["flushed-at-exit", "written-while-running"])
def test_output_to_a_closed_reader_ends_quietly(tmp_path, count) -> None:
    """A small report meets the closed pipe when run() flushes; a large one while typer writes it.
    Both end with status 1 (click's convention for EPIPE) and not a word on stderr."""
    code, stderr = _to_a_closed_reader(tmp_path, "lint", "--format", "json", *_many_dockerfiles(tmp_path, count))
    assert code == 1
    assert stderr == "", stderr


def _kubeconfig_with_embedded_credentials(tmp_path: Path) -> tuple[Path, str]:
    """A kubeconfig whose client key and certificates are inline (``*-data``), for a server that refuses."""
    ca = make_ca(tmp_path / "ca")
    cert = base64.b64encode(Path(ca.cert).read_bytes()).decode()
    key = base64.b64encode(Path(ca.key).read_bytes()).decode()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:9\n    certificate-authority-data: {cert}\n"
        f"users:\n- name: u\n  user:\n    client-certificate-data: {cert}\n    client-key-data: {key}\n"
        "contexts:\n- name: c\n  context: {cluster: c, user: u}\n"
    )
    return kubeconfig, key


def test_atexit_handlers_still_run(tmp_path) -> None:
    """The kubernetes client writes a kubeconfig's client key and certificates to temporary files and deletes
    them from an atexit handler; os._exit alone would leave private keys in $TMPDIR."""
    kubeconfig, key = _kubeconfig_with_embedded_credentials(tmp_path)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    run = subprocess.run([_script(), "target", "show", "--cluster", "--kubeconfig", str(kubeconfig)],
                         capture_output=True, text=True, timeout=120, env=_env(tmp_path, TMPDIR=str(tmpdir)))
    assert run.returncode == 3 and "connection refused" in run.stderr, run.stderr
    assert key not in run.stderr + run.stdout
    assert list(tmpdir.iterdir()) == [], "temporary credential files were left behind"


def test_the_probe_for_leftover_files_can_fail(tmp_path) -> None:
    """The same cluster read ended with a bare os._exit leaves the files: the test above is not vacuous."""
    kubeconfig, _ = _kubeconfig_with_embedded_credentials(tmp_path)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    bare_exit = ("import os, sys\nsys.argv = ['imagelint', 'target', 'show', '--cluster', '--kubeconfig', sys.argv[1]]\n"
                 "from imagelint.cli import main\ntry:\n    main()\nexcept SystemExit as exc:\n    os._exit(exc.code or 0)\n")
    run = subprocess.run([sys.executable, "-c", bare_exit, str(kubeconfig)], capture_output=True, text=True, timeout=120,
                         env=_env(tmp_path, TMPDIR=str(tmpdir)))
    assert run.returncode == 3
    assert list(tmpdir.iterdir()), "kubernetes no longer writes temporary files: the atexit test proves nothing"


@pytest.mark.parametrize(
    ("code", "status"), [(None, 0), (0, 0), (1, 1), (3, 3), (130, 130), (256, 0), (-1, 255), (True, 1)]
)
def test_exit_status_is_what_python_gives(code, status) -> None:
    assert exit_status(code) == status
    python = subprocess.run([sys.executable, "-c", f"import sys; sys.exit({code!r})"], capture_output=True)
    assert python.returncode == status


def test_a_message_exit_is_printed_and_fails_like_python(capsys) -> None:
    assert exit_status("imagelint: gone") == 1
    assert capsys.readouterr().err == "imagelint: gone\n"
    python = subprocess.run([sys.executable, "-c", "import sys; sys.exit('imagelint: gone')"], capture_output=True, text=True)
    assert (python.returncode, python.stderr) == (1, "imagelint: gone\n")


_RSS_PROBE = r"""
import gc, sys
path, tuned = sys.argv[1], sys.argv[2] == "tuned"
if tuned:
    from imagelint.__main__ import GC_THRESHOLD
    gc.set_threshold(*GC_THRESHOLD)
from imagelint.facts.capture import CAPTURE_SPEC
from imagelint.image import Layer
from imagelint.layers.reader import extract_layer
def peak_kib():  # VmHWM: this process's own peak (ru_maxrss may carry the forking parent's)
    return int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM:")).split()[1])
before = peak_kib()
layer = Layer(0, "sha256:" + "0" * 64, None, "application/vnd.oci.image.layer.v1.tar+gzip", None, lambda: open(path, "rb"))
extract = extract_layer(layer, CAPTURE_SPEC)
after = peak_kib()
print((after - before) / 1024, len(extract.entries), gc.get_stats()[0]["collections"])
"""


def test_the_gc_threshold_keeps_a_layer_read_as_small(tmp_path) -> None:
    """The raised gen-0 threshold saves collections, not memory: reading a layer of 40,000 small files
    (objects per tar member are what a read allocates) peaks no higher than with Python's default."""
    import io
    import tarfile

    from isal import igzip

    path = tmp_path / "layer.tar.gz"
    with igzip.open(path, "wb", compresslevel=1) as gz, tarfile.open(fileobj=gz, mode="w|") as tf:
        data = b"CUDA_VISIBLE_DEVICES = 0\n" * 4
        for i in range(40_000):
            info = tarfile.TarInfo(f"app/d{i % 300}/f{i}.py")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    grown = {}
    for mode in ("default", "tuned"):
        done = subprocess.run([sys.executable, "-c", _RSS_PROBE, str(path), mode], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        mb, entries, collections = done.stdout.split()
        assert int(entries) >= 40_000
        grown[mode] = (float(mb), int(collections))
    assert grown["default"][0] > 10, f"the probe sees the entries' memory: {grown}"
    assert grown["tuned"][1] < grown["default"][1] / 2, f"fewer collections: {grown}"
    assert grown["tuned"][0] < grown["default"][0] + 8, f"peak RSS growth in MB: {grown}"
