"""The foundation's promise, end to end through the installed CLI: the same example image
reached through every kind of reference — a registry (plain, TLS + basic auth, bearer
token), the Docker daemon, a docker-save archive, an OCI layout and an OCI archive —
yields the same facts with provenance: CUDA version, driver libraries, loader paths and
GPU-index settings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.imagebuilder import write_docker_archive, write_oci_archive, write_oci_layout

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
from build_example import build_image  # noqa: E402

IMAGE = build_image().build()


def inspect(ref: str, *flags: str, env: dict | None = None) -> dict:
    run = subprocess.run(["imagelint", "inspect", ref, "--format", "json", "--no-cache", *flags],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def assert_example_facts(doc: dict) -> None:
    versions = {(v["version"], v["source"]) for v in doc["cuda"]["versions"]}
    assert ("12.4.1", "version.json") in versions and ("12.4.1", "env") in versions
    vj = next(v for v in doc["cuda"]["versions"] if v["source"] == "version.json")
    assert vj["provenance"]["via"] == "usr/local/cuda/version.json"
    assert vj["provenance"]["path"] == "usr/local/cuda-12.4/version.json"
    assert vj["provenance"]["layer_digest"].startswith("sha256:") and vj["provenance"]["layer_index"] == 0
    compat = [d for d in doc["driver_libraries"] if d["role"] == "compat" and d["version"] == "550.54.15"]
    assert compat and compat[0]["fwd_compat"]["cuda_version"] == "12.4" and not compat[0]["on_loader_path"]
    assert "/usr/local/nvidia/lib64" in doc["loader"]["directories"]
    gpu_id = [s for s in doc["gpu"]["index_settings"] if s["kind"] == "gpu-id" and s["indices"] == [1]]
    assert gpu_id and gpu_id[0]["provenance"]["path"] == "app/config.txt" and gpu_id[0]["provenance"]["line"] == 10
    assert gpu_id[0]["referenced"] is True


def test_oci_layout_archive_and_docker_archives(tmp_path) -> None:
    layout = write_oci_layout(tmp_path / "layout", {"v1": IMAGE})
    archive = write_oci_archive(tmp_path / "img.oci.tar", {"v1": IMAGE}, tmp_path / "work")
    classic = write_docker_archive(tmp_path / "classic.tar", IMAGE, ["example/cuda-app:v1"])
    oci_in_tar = write_docker_archive(tmp_path / "docker25.tar", IMAGE, ["example/cuda-app:v1"], layout="oci")
    for ref in (f"oci-dir:{layout}", str(layout), f"oci-archive:{archive}", f"docker-archive:{classic}",
                str(classic), f"docker-archive:{oci_in_tar}"):
        assert_example_facts(inspect(ref))


def test_plain_registry(plain_registry) -> None:
    plain_registry.push("example/cuda-app", "v1", IMAGE)
    doc = inspect(f"registry:{plain_registry.host}/example/cuda-app:v1", "--insecure-registry", plain_registry.host)
    assert_example_facts(doc)
    assert doc["digest"] == IMAGE.digest


def test_tls_basic_auth_registry(tls_registry, tmp_path) -> None:
    tls_registry.push("example/cuda-app", "v1", IMAGE)
    config = tls_registry.docker_config_dir(tmp_path / "docker")
    doc = inspect(f"{tls_registry.host}/example/cuda-app:v1", "--ca-cert", str(tls_registry.ca_cert),
                  "--docker-config", str(config))
    assert_example_facts(doc)


def test_token_registry(token_registry, tmp_path) -> None:
    token_registry.push("example/cuda-app", "v1", IMAGE)
    config = token_registry.docker_config_dir(tmp_path / "docker")
    env = {**__import__("os").environ, "DOCKER_CONFIG": str(config)}
    doc = inspect(f"registry:{token_registry.host}/example/cuda-app@{IMAGE.digest}",
                  "--ca-cert", str(token_registry.ca_cert), env=env)
    assert_example_facts(doc)


def test_docker_daemon(dockerd, tmp_path) -> None:
    classic = write_docker_archive(tmp_path / "classic.tar", IMAGE, ["example/cuda-app:v1"])
    with open(classic, "rb") as fh:
        dockerd.client().images.load(fh.read())
    env = {**__import__("os").environ, "DOCKER_HOST": dockerd.url}
    assert_example_facts(inspect("docker:example/cuda-app:v1", env=env))
    # A bare name: the daemon has it, so no registry is asked.
    assert_example_facts(inspect("example/cuda-app:v1", env=env))
