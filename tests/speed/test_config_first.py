"""Config first: a config-only look at a registry image costs the manifest and the config, never a layer byte."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

from tests.support.faultproxy import FaultProxy
from tests.support.imagebuilder import File, ImageSpec


def _image() -> ImageSpec:
    marker = uuid.uuid4().hex.encode()
    return ImageSpec(
        layers=[[File("usr/local/cuda-12.4/version.json", b'{"cuda":{"version":"12.4.1"}}')],
                [File("app/run.sh", b"#!/bin/sh\nexec python3 app.py\n" + marker)]],
        env={"CUDA_VERSION": "12.4.1", "NVIDIA_VISIBLE_DEVICES": "all"},
    )


def _imagelint(*args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "imagelint", *args], capture_output=True, text=True, env=env, timeout=60)


def _answered(proxy: FaultProxy) -> list[tuple[str, str]]:
    return [(s.method, s.path.rsplit("/", 2)[-2]) for s in proxy.seen()]


def test_inspect_config_only_costs_exactly_manifest_and_config(plain_registry, counting_proxy, tmp_path) -> None:
    built = _image().build()
    repo = f"speed/{uuid.uuid4().hex[:8]}"
    plain_registry.push(repo, "1", built)
    ref = f"registry:{counting_proxy.host}/{repo}:1"
    done = _imagelint("inspect", ref, "--insecure-registry", counting_proxy.host, "--config-only", "--format", "json",
                      "--cache-dir", str(tmp_path / "cache"), env_extra={"DOCKER_CONFIG": str(tmp_path / "no-docker")})
    assert done.returncode == 0, done.stderr
    assert '"complete": false' in done.stdout and "12.4.1" in done.stdout
    seen = counting_proxy.seen()
    assert [(s.method, s.path) for s in seen] == [
        ("GET", f"/v2/{repo}/manifests/1"),
        ("GET", f"/v2/{repo}/blobs/{built.config_digest}"),
    ]
    assert not any(layer_digest in s.path for s in seen for layer_digest, *_ in built.layers)
    # The next run over the same cache asks for the manifest alone: the config it names is the one kept.
    again = _imagelint("inspect", ref, "--insecure-registry", counting_proxy.host, "--config-only", "--format", "json",
                       "--cache-dir", str(tmp_path / "cache"), env_extra={"DOCKER_CONFIG": str(tmp_path / "no-docker")})
    assert again.returncode == 0 and again.stdout == done.stdout, again.stderr
    assert [(s.method, s.path) for s in counting_proxy.seen()[len(seen):]] == [("GET", f"/v2/{repo}/manifests/1")]


def test_config_only_after_token_auth_is_still_two_requests(token_registry, tmp_path) -> None:
    built = _image().build()
    repo = f"speed/{uuid.uuid4().hex[:8]}"
    token_registry.push(repo, "1", built)
    proxy = FaultProxy(token_registry.url, verify=token_registry.ca_cert)
    try:
        config_dir = token_registry.docker_config_dir(tmp_path / "docker", host=proxy.host)
        done = _imagelint("inspect", f"registry:{proxy.host}/{repo}:1", "--insecure-registry", proxy.host,
                          "--ca-cert", token_registry.ca_cert, "--docker-config", str(config_dir), "--config-only",
                          "--format", "json", "--cache-dir", str(tmp_path / "cache"))
        assert done.returncode == 0, done.stderr
        seen = proxy.seen()
    finally:
        proxy.stop()
    # The anonymous try is answered 401 (the challenge); after the token, exactly manifest + config.
    assert seen[0].authorization is None and seen[0].path == f"/v2/{repo}/manifests/1"
    after_auth = [(s.method, s.path) for s in seen if s.authorization]
    assert after_auth == [("GET", f"/v2/{repo}/manifests/1"), ("GET", f"/v2/{repo}/blobs/{built.config_digest}")]
    assert len(seen) == 3
    # One token for imagelint's pull (the push before it asked for its own pull,push token).
    pulls = [r for r in token_registry.token_server.requests_for(repo) if r.scopes == (f"repository:{repo}:pull",)]
    assert len(pulls) == 1 and pulls[0].user == token_registry.username
