"""Fixtures shared by the source tests. Each owner keeps to a clearly separated block."""

from __future__ import annotations

# ---- registry fixtures (registry source owner) -------------------------------------------------
# Real Debian docker-registry servers, started once per session; the reusable part is
# tests/support/registry.py. Each fixture skips (with the reason) when the registry cannot run.
import pytest as _pytest

from tests.support import registry as _registry_support


def _start_registry_or_skip(tmp_path_factory, kind: str, ca=None):
    try:
        return _registry_support.start_registry(tmp_path_factory.mktemp(f"registry-{kind}"), kind, ca=ca)
    except _registry_support.RegistryUnavailable as exc:
        _pytest.skip(f"cannot run docker-registry: {exc}")


@_pytest.fixture(scope="session")
def registry_ca(tmp_path_factory):
    """One self-signed certificate (SAN localhost, 127.0.0.1): the TLS servers' cert and the clients' CA."""
    if _registry_support.registry_binary() is None:
        _pytest.skip("docker-registry is not installed (apt-get install docker-registry)")
    return _registry_support.make_ca(tmp_path_factory.mktemp("registry-ca"))


@_pytest.fixture(scope="session")
def plain_registry(tmp_path_factory):
    """Plain HTTP, anonymous. Clients must list ``.host`` in ``insecure_registries``."""
    server = _start_registry_or_skip(tmp_path_factory, "plain")
    yield server
    server.stop()


@_pytest.fixture(scope="session")
def tls_registry(tmp_path_factory, registry_ca):
    """TLS (``.ca_cert``) + htpasswd basic auth (``.username``, ``.password``)."""
    server = _start_registry_or_skip(tmp_path_factory, "tls", registry_ca)
    yield server
    server.stop()


@_pytest.fixture(scope="session")
def token_registry(tmp_path_factory, registry_ca):
    """TLS + bearer tokens from the tests' token server (``.token_server``, ``.username``, ``.password``)."""
    server = _start_registry_or_skip(tmp_path_factory, "token", registry_ca)
    yield server
    server.stop()
# ---- end of registry fixtures -----------------------------------------------------------------


# ---- dockerd fixture (archive/layout/daemon source owner) --------------------------------------
# One private dockerd per session (vfs, no networking, its own socket under a short temp dir),
# stopped by PID at the end; skips with the reason and dockerd's last log lines if it cannot run.
import tempfile as _tempfile

from tests.support import dockerd as _dockerd_support


@_pytest.fixture(scope="session")
def dockerd():
    """A started ``DockerDaemon``: ``.url`` (unix://...), ``.client()`` (a docker.DockerClient)."""
    root = _tempfile.mkdtemp(prefix="il-dockerd-")  # short: unix socket paths are limited to ~107 bytes
    daemon = _dockerd_support.DockerDaemon(root)
    try:
        daemon.start()
    except _dockerd_support.DaemonUnavailable as exc:
        _pytest.skip(f"cannot run dockerd: {exc}")
    yield daemon
    daemon.stop()
    _dockerd_support.remove_root(root)
# ---- end of dockerd fixture -------------------------------------------------------------------
