"""Fixtures every test directory may use: the real registries and a real dockerd.

Each is started once per session, on 127.0.0.1, in its own temp dir, and stopped by PID at
the end; each skips (with the reason) where it cannot run. The reusable parts are
tests/support/registry.py and tests/support/dockerd.py.
"""

from __future__ import annotations

import tempfile

import pytest

from tests.support import dockerd as dockerd_support
from tests.support.registry import make_ca_or_skip, start_registry_or_skip


@pytest.fixture(scope="session")
def registry_ca(tmp_path_factory):
    """One self-signed certificate (SAN localhost, 127.0.0.1): the TLS servers' cert and the clients' CA."""
    return make_ca_or_skip(tmp_path_factory)


@pytest.fixture(scope="session")
def plain_registry(tmp_path_factory):
    """Plain HTTP, anonymous. Clients must list ``.host`` in ``insecure_registries``."""
    server = start_registry_or_skip(tmp_path_factory, "plain")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def tls_registry(tmp_path_factory, registry_ca):
    """TLS (``.ca_cert``) + htpasswd basic auth (``.username``, ``.password``)."""
    server = start_registry_or_skip(tmp_path_factory, "tls", registry_ca)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def token_registry(tmp_path_factory, registry_ca):
    """TLS + bearer tokens from the tests' token server (``.token_server``, ``.username``, ``.password``)."""
    server = start_registry_or_skip(tmp_path_factory, "token", registry_ca)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def dockerd():
    """A started ``DockerDaemon``: ``.url`` (unix://...), ``.client()`` (a docker.DockerClient)."""
    root = tempfile.mkdtemp(prefix="il-dockerd-")  # short: unix socket paths are limited to ~107 bytes
    daemon = dockerd_support.DockerDaemon(root)
    try:
        daemon.start()
    except dockerd_support.DaemonUnavailable as exc:
        pytest.skip(f"cannot run dockerd: {exc}")
    yield daemon
    daemon.stop()
    dockerd_support.remove_root(root)

