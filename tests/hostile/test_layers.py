"""Hostile layers served by the REAL registry and read from docker-save archives and OCI layouts,
all through the installed ``imagelint inspect`` console script.

Each case asserts one of the two allowed outcomes — a report with a warning, or exit 3
with one line naming the layer — and, for every run, that nothing was written outside
the temp cache dir and no host file was read through a link.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from imagelint.errors import EXIT_UNREADABLE
from imagelint.layers.filesystem import ImageFilesystem
from imagelint.layers.limits import ReadLimits
from imagelint.layers.reader import extract_layer
from imagelint.layers.model import CaptureRule, CaptureSpec
from tests.hostile.cli import MiB, CliRun, assert_unreadable, inspect_api, run_cli, run_command
from tests.layers.helpers import blob_layer
from tests.support.hostile_images import (
    HOST_PASSWD_MARKER,
    bytes_layer,
    hostile_members,
    image_of,
    lying_size_tar,
    many_files_layer,
    not_a_tar,
    publish,
    tar_layer,
    truncated_blob,
    zero_file_layer,
)
from tests.support.hostile_images import RawLayer
from tests.support.imagebuilder import File, sha256

RANDOM = os.urandom(4096)

TRANSPORTS = ("registry", "oci-dir", "docker-archive")
ESCAPES = [Path("/tmp/imagelint-escape-dotdot"), Path("/tmp/imagelint-escape-absolute"),
           Path("/etc/imagelint-escape-mid"), Path("/etc/imagelint-escape-dotdot")]


class Sandbox:
    """A temp HOME, cache dir, TMPDIR and working directory for one CLI run, checked afterwards."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.cache = root / "cache"
        self.tmp = root / "tmp"
        self.cwd = root / "cwd"
        for d in (self.home, self.cache, self.tmp, self.cwd):
            d.mkdir(parents=True, exist_ok=True)
        self.tmp_before = set(os.listdir("/tmp"))

    @property
    def env(self) -> dict[str, str]:
        return {"HOME": str(self.home), "IMAGELINT_CACHE_DIR": str(self.cache), "XDG_CACHE_HOME": str(self.cache),
                "TMPDIR": str(self.tmp), "DOCKER_CONFIG": str(self.home / "no-docker-config")}

    def run(self, *args: str, **kw) -> CliRun:
        return run_cli(*args, env={**self.env, **kw.pop("env", {})}, cwd=self.cwd, **kw)

    def assert_nothing_written_outside(self) -> None:
        assert not any(p.exists() or p.is_symlink() for p in ESCAPES), "a member escaped the root"
        assert list(self.cwd.iterdir()) == [], "files appeared in the working directory"
        assert list(self.tmp.iterdir()) == [], "temp files were left behind"
        assert list(self.home.iterdir()) == [], "files appeared in HOME"
        # anything the run wrote lives in the cache dir (and only regular files there)
        for p in self.cache.rglob("*"):
            assert p.is_dir() or (p.is_file() and not p.is_symlink()), p
        # /tmp is shared with other test runs on the machine: look for what this image's members are named
        new_in_tmp = {n for n in set(os.listdir("/tmp")) - self.tmp_before if n.startswith("imagelint-escape")}
        assert not new_in_tmp, new_in_tmp


@pytest.fixture
def sandbox(tmp_path) -> Sandbox:
    return Sandbox(tmp_path / "sandbox")


def _refs(built, tmp_path, registry) -> dict[str, str]:
    return publish(built, tmp_path / "image", registry)


def _inspect(sandbox: Sandbox, refs: dict[str, str], transport: str, registry, *extra: str) -> CliRun:
    args = ["inspect", "--format", "json", refs[transport], *extra]
    if transport == "registry":
        args += ["--insecure-registry", registry.host]
    return sandbox.run(*args)


# --- members: a report with warnings, never an escape -------------------------------------------------------


def _assert_hostile_report(doc: dict, where: str) -> None:
    warnings = "\n".join(doc["warnings"])
    assert "'../../../../tmp/imagelint-escape-dotdot': path escapes the root" in warnings, where
    assert "absolute member name '/tmp/imagelint-escape-absolute'" in warnings, where
    assert "'./usr/../../etc/imagelint-escape-mid': path escapes the root" in warnings, where
    assert "hardlink 'usr/lib/hardlink-out'" in warnings and "escapes the root" in warnings, where
    assert "not UTF-8" in warnings, where
    # The version.json reached through a link that climbs above the root is the IMAGE's 11.8 file ...
    versions = {(v["version"], v["source"]) for v in doc["cuda"]["versions"]}
    assert ("11.8.0", "version.json") in versions, where
    # ... and nothing from the host's /usr/local/cuda-13.0 or /etc/passwd shows up.
    assert not any(v["version"].startswith("13") for v in doc["cuda"]["versions"]), where
    text = json.dumps(doc)
    assert HOST_PASSWD_MARKER not in text and "cuda-13.0/lib64" not in text, where


def test_hostile_members_give_a_report_with_warnings_and_nothing_escapes(plain_registry, tmp_path, sandbox):
    from imagelint.report.facts import facts_to_json

    built = image_of([tar_layer(hostile_members())], env={"CUDA_VERSION": "12.4.1"})
    refs = _refs(built, tmp_path, plain_registry)
    for transport in TRANSPORTS:
        api = inspect_api(refs[transport], (plain_registry.host,))
        assert api.exit_code == 0, (transport, api.message)
        _assert_hostile_report(facts_to_json(api.facts[0]), transport)
    run = _inspect(sandbox, refs, "registry", plain_registry)  # and through the console script
    assert run.returncode == 0 and run.stderr == "", run.stderr
    _assert_hostile_report(json.loads(run.stdout), "cli")
    assert HOST_PASSWD_MARKER not in run.output
    assert list(sandbox.cache.rglob("*.ilx")), "the run used the layer cache (so 'only inside it' means something)"
    sandbox.assert_nothing_written_outside()


def test_links_resolve_inside_the_image_root_never_on_the_host() -> None:
    # The same layer through the reader + merged view: every link target is looked up in the image.
    spec = CaptureSpec((CaptureRule("**/version.json", "content", 4096), CaptureRule("etc/**", "content", 4096),
                        CaptureRule("**", "record")))
    layer = tar_layer(hostile_members())
    fs = ImageFilesystem.from_extracts([extract_layer(blob_layer(0, layer.blob, "gzip"), spec)])
    image_copy = fs.read("usr/local/cuda-11.8/version.json")
    assert image_copy and b"11.8.0" in image_copy
    assert fs.resolve("usr/local/cuda-12.4/version.json") == "usr/local/cuda-11.8/version.json"
    assert fs.read("usr/local/cuda-12.4/version.json") == image_copy
    assert fs.resolve("usr/local/cuda-12.5/version.json") is None  # /etc/passwd: not in the image
    assert fs.read("usr/local/cuda-12.5/version.json") is None
    assert fs.resolve("usr/lib/x86_64-linux-gnu/libcudart.so.13") is None  # the host has it; the image does not
    assert fs.resolve("loop/a") is None and fs.resolve("loop/self") is None
    assert fs.resolve("usr/local/cuda-loop/version.json") is None
    assert fs.read("etc/ld.so.conf.d/dup.conf") == b"/second\n"  # the later duplicate wins
    suid = fs.entry("usr/local/bin/suid-root")
    assert suid is not None and suid.mode & 0o4000  # recorded as metadata; nothing is ever executed
    assert fs.entry("dev/nvidia0").kind == "other" and fs.entry("run/fifo").kind == "other"
    assert fs.entry("tmp/imagelint-escape-absolute") is not None or fs.lookup("tmp/imagelint-escape-absolute") is None


# --- broken layers: exit 3, one line naming the layer ---------------------------------------------------------

BROKEN = {
    "lying-size": (lambda: bytes_layer(lying_size_tar(), "gzip"), "truncated layer"),
    "truncated-gzip": (lambda: truncated_blob(tar_layer([File("opt/x", os.urandom(64 << 10))], "gzip")), "layer 0 ("),
    "truncated-zstd": (lambda: truncated_blob(tar_layer([File("opt/x", os.urandom(64 << 10))], "zstd")), "layer 0 ("),
    "not-a-tar": (lambda: not_a_tar("gzip"), "not a tar archive"),
    "random-bytes-said-gzip": (lambda: RawLayer(RANDOM, "gzip", sha256(RANDOM)), "layer 0 ("),
    "partial-header": (lambda: bytes_layer(b"usr/x" + bytes(95), "none"), "layer 0 ("),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_layers_exit_3_with_one_line(case, plain_registry, tmp_path, sandbox):
    make, fragment = BROKEN[case]
    refs = _refs(image_of([make()]), tmp_path, plain_registry)
    for transport in TRANSPORTS:  # in-process: the same core the CLI calls
        api = inspect_api(refs[transport], (plain_registry.host,))
        assert api.exit_code == EXIT_UNREADABLE and fragment in api.message, (transport, api)
    # and once through the console script, rotating the transport across cases
    transport = TRANSPORTS[sorted(BROKEN).index(case) % len(TRANSPORTS)]
    assert_unreadable(_inspect(sandbox, refs, transport, plain_registry), fragment)
    sandbox.assert_nothing_written_outside()


# --- bombs: bounded inflation, memory and time, measured ------------------------------------------------------

LIMITED = [sys.executable, "-m", "tests.hostile.limited_read"]
BOMB_SIZE = 3 << 30  # 3 GiB of zeros: ~3 MB gzip, ~100 KB zstd


@pytest.fixture(scope="module")
def bombs(tmp_path_factory, plain_registry):
    out = {}
    for compression in ("gzip", "zstd"):
        layer = zero_file_layer("opt/zeros.bin", BOMB_SIZE, compression, hash_diff_id=False)
        built = image_of([tar_layer([File("usr/local/cuda-12.4/version.json", b'{"cuda":{"version":"12.4.1"}}')]), layer])
        out[compression] = (layer, publish(built, tmp_path_factory.mktemp(f"bomb-{compression}"), plain_registry))
    return out


def _outcomes(run: CliRun) -> dict[str, tuple[int, str]]:
    assert "Traceback" not in run.output, run.output
    out = {}
    for line in run.stdout.splitlines():
        ref, code, message = line.split("\t", 2)
        out[ref] = (int(code.split("=")[1]), message)
    return out


@pytest.mark.parametrize("compression", ["gzip", "zstd"])
def test_bomb_past_the_configured_limit_stops_early_with_bounded_memory(compression, bombs, plain_registry):
    layer, refs = bombs[compression]
    assert len(layer.blob) < 4 * MiB  # a small layer ...
    limit = 64 * MiB  # ... inflating past a 64 MiB per-layer limit
    cmd = [*LIMITED, *(refs[t] for t in TRANSPORTS), "--max-layer", str(limit), "--insecure-registry", plain_registry.host]
    run = run_command(cmd, rlimit_as=1024 * MiB, timeout=60)
    outcomes = _outcomes(run)
    assert len(outcomes) == 3
    for ref, (code, message) in outcomes.items():
        assert code == EXIT_UNREADABLE and "layer 1 (" in message and str(limit) in message, (ref, message)
    assert run.peak_rss_bytes < 200 * MiB, run.peak_rss_bytes  # all three reads, one process
    assert run.seconds < 20, run.seconds


def test_per_image_limit_spans_layers(tmp_path, plain_registry):
    layers = [zero_file_layer(f"opt/z{i}", 48 * MiB, "zstd", hash_diff_id=False) for i in range(3)]
    refs = publish(image_of(layers), tmp_path / "img", plain_registry)
    run = run_command([*LIMITED, refs["oci-dir"], "--max-layer", str(64 * MiB), "--max-image", str(100 * MiB)],
                      rlimit_as=1024 * MiB)
    [(code, message)] = _outcomes(run).values()
    assert code == EXIT_UNREADABLE and str(100 * MiB) in message, message


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["oci-dir", "registry"])
def test_the_cli_streams_a_bomb_under_default_limits_in_bounded_memory(transport, bombs, plain_registry, sandbox):
    # Default limits fit 20 GB images, so 3 GiB of zeros is read to the end: what matters is that it
    # streams (memory flat, ~1 GB/s) and the report comes out.
    _, refs = bombs["zstd"]
    args = ["inspect", "--format", "json", refs[transport], "--insecure-registry", plain_registry.host]
    run = run_cli(*args, env=sandbox.env, cwd=sandbox.cwd, rlimit_as=1536 * MiB, timeout=60)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["complete"] is True
    assert run.peak_rss_bytes < 250 * MiB, run.peak_rss_bytes
    assert run.seconds < 30, run.seconds
    sandbox.assert_nothing_written_outside()


@pytest.mark.slow
def test_a_2gb_single_file_streams_through_the_registry(tmp_path, plain_registry, sandbox):
    big = zero_file_layer("opt/model/weights.bin", 2 << 30, "gzip")  # real diff_id: the image is valid
    refs = publish(image_of([big], env={"CUDA_VERSION": "12.4.1"}), tmp_path / "img", plain_registry)
    for transport in ("registry", "docker-archive"):
        args = ["inspect", "--format", "json", refs[transport], "--insecure-registry", plain_registry.host]
        run = run_cli(*args, env=sandbox.env, cwd=sandbox.cwd, rlimit_as=1536 * MiB, timeout=60)
        assert run.returncode == 0, run.stderr
        assert run.peak_rss_bytes < 250 * MiB, (transport, run.peak_rss_bytes)
        assert run.seconds < 25, (transport, run.seconds)
    sandbox.assert_nothing_written_outside()


@pytest.mark.slow
def test_a_million_tiny_files(tmp_path, sandbox):
    layer = many_files_layer(1_000_000, "zstd")
    refs = publish(image_of([layer]), tmp_path / "img")
    run = run_cli("inspect", "--format", "json", refs["oci-dir"], env=sandbox.env, cwd=sandbox.cwd,
                  rlimit_as=1536 * MiB, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.peak_rss_bytes < 250 * MiB, run.peak_rss_bytes
    # ~15 us per member on an idle core (the walk is per-header Python); 2x headroom for a busy CI box.
    assert run.seconds < 60, run.seconds
    # and past a configured member limit: exit 3 naming the limit


def test_member_count_limit_is_exit_3(tmp_path):
    from imagelint.errors import LimitExceededError

    layer = many_files_layer(5000, "gzip")
    with pytest.raises(LimitExceededError) as err:
        extract_layer(blob_layer(0, layer.blob, "gzip"), CaptureSpec((CaptureRule("**"),)),
                      ReadLimits(max_members_per_layer=1000))
    assert err.value.exit_code == EXIT_UNREADABLE and "more than 1000 tar members" in str(err.value)
