"""The console entry ``imagelint.__main__:run``: exit codes as documented, output flushed in full,
quiet when the reader goes away, atexit handlers run.

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


def test_the_console_script_is_the_entry_point_declared() -> None:
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
    """Block-buffered stdout: whatever is still in the buffer at the end arrives too."""
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
    """A small report meets the closed pipe when main flushes; a large one while the command writes it.
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
    them from an atexit handler: the run must end through Python's normal exit, or private keys stay in $TMPDIR."""
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


def test_ctrl_c_ends_a_check_with_130_and_one_line(tmp_path) -> None:
    """A KeyboardInterrupt during a command ends the run with 130, as shells report a SIGINT,
    one line on stderr and no traceback (click alone would end it without a word)."""
    import signal
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    host = f"127.0.0.1:{listener.getsockname()[1]}"
    process = subprocess.Popen([sys.executable, "-m", "imagelint", "check", f"registry:{host}/app:1", "--insecure-registry",
                                host, "--driver", "550.54.15", "--timeout", "60", "--no-cache"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(tmp_path))
    try:
        listener.settimeout(30)
        connection, _ = listener.accept()  # the registry answers nothing: the check waits in a read
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
        listener.close()
    connection.close()
    assert process.returncode == 130, err
    assert err == "imagelint: interrupted\n" and out == ""


def test_the_console_entry_leaves_the_heap_frozen_however_the_command_ends(monkeypatch) -> None:
    """``run`` (the script, not ``main``) raises the young generation's threshold for the command and
    freezes what it built once it has ended, error or not, so that the interpreter's collections at
    shutdown do not walk it."""
    import gc

    import imagelint.__main__ as console

    threshold = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []

    def command() -> None:
        seen.append(gc.get_threshold())
        raise SystemExit(3)

    monkeypatch.setattr(console, "main", command)
    assert gc.get_freeze_count() == 0
    try:
        with pytest.raises(SystemExit) as ended:
            console.run()
        assert ended.value.code == 3
        assert seen == [(console._YOUNG_GENERATION, *threshold[1:])]
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
