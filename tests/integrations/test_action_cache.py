"""The Action keeps imagelint's layer cache between runs: its cache key, and two CI runs of its step
script through one cache directory (what actions/cache restores), against a real registry behind a
counting proxy: the second run, on an image that changed only its application layer, fetches
only that layer's blob."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.integrations.test_action import ROOT, action, run_action
from tests.support.imagebuilder import File, ImageSpec, Symlink


def _steps() -> list[dict]:
    return action()["runs"]["steps"]


def test_the_cache_key_starts_fresh_for_a_new_imagelint_version_and_restores_across_images() -> None:
    steps = _steps()
    install = next(s for s in steps if s.get("id") == "install")
    cache = next(s for s in steps if str(s.get("uses", "")).startswith("actions/cache@"))
    assert steps.index(install) < steps.index(cache), "the version is known before the cache is restored"
    version = "${{ steps.install.outputs.version }}"
    restore = cache["with"]["restore-keys"].strip()
    # A new version: the prefix changes, no earlier cache is restored.
    assert version in restore and restore.endswith("-")
    # A new base image or application layer: nothing of the image is in the key, any earlier run of
    # this version restores (its layers are found by digest inside the directory).
    assert cache["with"]["key"].startswith(restore) and "inputs." not in cache["with"]["key"]
    run_env = next(s for s in steps if s.get("id") == "run")["env"]
    assert run_env["IMAGELINT_CACHE_MAX_SIZE"], "the saved cache is bounded by imagelint's own limit"


def test_the_install_step_outputs_the_version_it_installed(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    (venv / "bin" / "imagelint").write_text("#!/bin/sh\n")
    (venv / "bin" / "imagelint").chmod(0o755)
    output = tmp_path / "github_output"
    output.write_text("")
    env = {**os.environ, "ACTION_PATH": str(ROOT), "IMAGELINT_VENV": str(venv), "GITHUB_OUTPUT": str(output)}
    done = subprocess.run(["bash", str(ROOT / "action" / "install.sh")], env=env, capture_output=True, text=True, timeout=60)
    from imagelint import __version__

    assert done.returncode == 0, done.stdout + done.stderr
    assert output.read_text() == f"version={__version__}\n"


BASE = [
    [File("usr/local/cuda-12.4/version.json", b'{"cuda":{"version":"12.4.1"}}'), Symlink("usr/local/cuda", "cuda-12.4")],
    [File("usr/local/cuda-12.4/compat/libcuda.so.550.54.15", b"\x7fELF" + bytes(60))],
    [File("usr/share/doc/notes.txt", bytes(200_000))],
]


def _image(app: bytes, marker: bytes):  # type: ignore[no-untyped-def]
    base = [[*BASE[0], File("etc/marker", marker)], *BASE[1:]]
    return ImageSpec(layers=[*base, [File("app/train.py", app)]], env={"CUDA_VERSION": "12.4.1"}).build()


def test_a_second_ci_run_through_the_cache_fetches_only_the_changed_layer(plain_registry, tmp_path: Path) -> None:
    from tests.support.faultproxy import FaultProxy

    marker = uuid.uuid4().hex.encode()
    first = _image(b"import torch\ntorch.cuda.set_device(0)\n", marker)
    second = _image(b"import torch\ntorch.cuda.set_device(1)\n", marker)  # the next commit: only /app changed
    repo = f"action/{uuid.uuid4().hex[:8]}"
    plain_registry.push(repo, "run1", first)
    plain_registry.push(repo, "run2", second)
    proxy = FaultProxy(plain_registry.url)
    layer_gets = lambda built: [s.path.rsplit("/", 1)[-1] for s in proxy.seen("/blobs/")  # noqa: E731
                                if s.method == "GET" and s.path.rsplit("/", 1)[-1] in {d for d, *_ in built.layers}]
    try:
        runs = []
        for tag, built in (("run1", first), ("run2", second)):
            proxy.clear()
            # Each run in a workspace and runner temp of its own; only the cache directory (what
            # actions/cache saved after the first run and restores before the second) is shared.
            proc, outputs, _ = run_action(tmp_path / tag, image=f"registry:{proxy.host}/{repo}:{tag}",
                                          driver="550.54.15", args=f"--insecure-registry {proxy.host}")
            assert outputs["exit-code"] in ("0", "1"), proc.stdout + proc.stderr
            runs.append(layer_gets(built))
            (tmp_path / "run2").mkdir(exist_ok=True)
            cache = tmp_path / tag / "cache"
            if tag == "run1":
                assert cache.is_dir()
                cache.rename(tmp_path / "run2" / "cache")  # restored by actions/cache in the next run
        assert sorted(runs[0]) == sorted(d for d, *_ in first.layers), "the first run reads every layer"
        assert runs[1] == [second.layers[-1][0]], "the second run fetches only the changed application layer"
    finally:
        proxy.stop()
