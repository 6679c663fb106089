"""Fixtures for the hostile suite: the real registries (reusing tests/support/registry.py) and a CLI runner."""

from __future__ import annotations

import pytest

from tests.support import registry as registry_support


def _start_or_skip(tmp_path_factory, kind: str, ca=None):
    try:
        return registry_support.start_registry(tmp_path_factory.mktemp(f"hostile-registry-{kind}"), kind, ca=ca)
    except registry_support.RegistryUnavailable as exc:
        pytest.skip(f"cannot run docker-registry: {exc}")


@pytest.fixture(scope="session")
def hostile_ca(tmp_path_factory):
    if registry_support.registry_binary() is None:
        pytest.skip("docker-registry is not installed (apt-get install docker-registry)")
    return registry_support.make_ca(tmp_path_factory.mktemp("hostile-ca"))


@pytest.fixture(scope="session")
def plain_registry(tmp_path_factory):
    server = _start_or_skip(tmp_path_factory, "plain")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def tls_registry(tmp_path_factory, hostile_ca):
    server = _start_or_skip(tmp_path_factory, "tls", hostile_ca)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def token_registry(tmp_path_factory, hostile_ca):
    server = _start_or_skip(tmp_path_factory, "token", hostile_ca)
    yield server
    server.stop()
