"""The hostile suite runs its own registries (it corrupts stored blobs, so it must not share
storage with other suites); same servers as tests/conftest.py, separate instances."""

from __future__ import annotations

import pytest

from tests.support.registry import make_ca_or_skip, start_registry_or_skip


@pytest.fixture(scope="session")
def hostile_ca(tmp_path_factory):
    return make_ca_or_skip(tmp_path_factory, "hostile")


@pytest.fixture(scope="session")
def plain_registry(tmp_path_factory):
    server = start_registry_or_skip(tmp_path_factory, "plain", prefix="hostile-registry")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def tls_registry(tmp_path_factory, hostile_ca):
    server = start_registry_or_skip(tmp_path_factory, "tls", hostile_ca, prefix="hostile-registry")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def token_registry(tmp_path_factory, hostile_ca):
    server = start_registry_or_skip(tmp_path_factory, "token", hostile_ca, prefix="hostile-registry")
    yield server
    server.stop()
