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


@pytest.fixture(autouse=True)
def headlines_stay_short(monkeypatch):
    """Every finding any rule yields in any test is a headline of at most HEADLINE_LIMIT
    characters on one line, with detail lines under it (issue 15): checked on each finding
    made through ``FindingFactory`` (every rule's), and the test fails at teardown otherwise.
    A test that itself builds a long ``Finding`` (report tests of the fallback) is not affected."""
    from imagelint.rules import base

    made = base.FindingFactory.__call__
    bad: list[str] = []

    def checked(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        f = made(self, *args, **kwargs)
        if len(f.message) > base.HEADLINE_LIMIT or "\n" in f.message or "\r" in f.message:
            bad.append(f"{f.rule} ({len(f.message)} chars): {f.message!r}")
        bad.extend(f"{f.rule} detail with a newline: {d!r}" for d in f.details if "\n" in d or "\r" in d)
        return f

    monkeypatch.setattr(base.FindingFactory, "__call__", checked)
    yield
    assert not bad, "findings whose headline is too long or not one line:\n" + "\n".join(dict.fromkeys(bad))
