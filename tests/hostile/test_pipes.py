"""Pipes are normal inputs: ``docker save app | imagelint check docker-archive:/dev/stdin``.

A piped archive is copied once into a bounded temporary file (0600, in TMPDIR, removed after the
run); a FIFO nobody writes to is refused after ``--timeout``, not at the run's deadline; a pipe
longer than ``--max-image-size`` is refused as it passes.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import threading
from pathlib import Path

import pytest

from tests.hostile.cli import assert_unreadable, imagelint_command, run_cli
from tests.support.hostile_images import image_of, publish, tar_layer
from tests.support.imagebuilder import File

MiB = 1 << 20


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    layer = tar_layer([File("usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05", b"\x7fELF" + bytes(64)),
                       File("opt/blob.bin", os.urandom(2 * MiB))])
    built = image_of([layer], config_patch={"config": {"Env": ["CUDA_VERSION=12.4.1", "NVIDIA_REQUIRE_CUDA=cuda>=12.4",
                                                               "CUDA_VISIBLE_DEVICES=3"]}})
    refs = publish(built, tmp_path_factory.mktemp("piped"))
    return Path(refs["docker-archive"].split(":", 1)[1])


def _through_a_pipe(args: list[str], data: bytes, tmp: Path) -> subprocess.CompletedProcess[bytes]:
    """The installed console script with ``data`` written into its stdin, a real pipe, by another thread."""
    from tests.hostile.cli import _TREE

    env = {**os.environ, "TMPDIR": str(tmp), "NO_COLOR": "1", "IMAGELINT_NO_CACHE": "1",
           "PYTHONPATH": _TREE}
    env.pop("GITHUB_ACTIONS", None)

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    proc = subprocess.Popen([*imagelint_command(), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, preexec_fn=cap)

    def write() -> None:
        try:
            proc.stdin.write(data)  # type: ignore[union-attr]
        except BrokenPipeError:
            pass
        finally:
            proc.stdin.close()  # type: ignore[union-attr]

    writer = threading.Thread(target=write)
    writer.start()
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    proc.wait(timeout=120)
    writer.join()
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


@pytest.mark.parametrize("transport", ["docker-archive", "oci-archive"])
def test_an_archive_piped_into_stdin_is_checked_and_its_copy_removed(archive, transport, tmp_path):
    spool = tmp_path / "tmp"
    spool.mkdir()
    done = _through_a_pipe(["check", f"{transport}:/dev/stdin", "--driver", "535.104.05", "--gpu", "H100",
                            "--format", "json"], archive.read_bytes(), spool)
    assert done.returncode == 1, done.stderr  # the findings (CUDA_VISIBLE_DEVICES), not an error
    result = json.loads(done.stdout)["results"][0]
    assert result["image"]["ref"] == f"{transport}:/dev/stdin" and not result.get("error")
    assert any(f["rule"] == "IL301" for f in result["findings"]), result["findings"]
    assert list(spool.iterdir()) == []  # the copy went with the run


def test_a_pipe_longer_than_the_image_size_limit_is_refused(archive, tmp_path):
    spool = tmp_path / "tmp"
    spool.mkdir()
    done = _through_a_pipe(["inspect", "docker-archive:/dev/stdin", "--max-image-size", "1M"], archive.read_bytes(),
                           spool)
    assert done.returncode == 3, done.stderr
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and "/dev/stdin: the archive is larger than" in lines[0], lines
    assert list(spool.iterdir()) == []


def test_a_fifo_with_no_writer_is_refused_after_the_timeout_not_the_deadline(tmp_path):
    fifo = tmp_path / "image.tar"
    os.mkfifo(fifo)
    run = run_cli("inspect", f"docker-archive:{fifo}", "--timeout", "2", "--deadline", "600", "--no-cache",
                  timeout=60, env={"TMPDIR": str(tmp_path)})
    assert_unreadable(run, f"{fifo}: nothing to read for 2 s (--timeout)")
    assert run.seconds < 50  # the bound asserted is --timeout's message above; this only keeps a hang from passing


def test_a_terminal_or_device_is_no_archive(tmp_path):
    run = run_cli("inspect", "docker-archive:/dev/zero", "--no-cache", timeout=60)
    assert_unreadable(run, "/dev/zero: a terminal or device, not an archive")
