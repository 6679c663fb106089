"""Real registries for the speed tests (module-scoped; the reusable part is tests/support/registry.py)."""

from __future__ import annotations

import pytest

from tests.support import registry as registry_support
from tests.support.faultproxy import FaultProxy


def _start_or_skip(tmp_path_factory, kind: str, ca=None):  # type: ignore[no-untyped-def]
    try:
        return registry_support.start_registry(tmp_path_factory.mktemp(f"speed-registry-{kind}"), kind, ca=ca)
    except registry_support.RegistryUnavailable as exc:
        pytest.skip(f"cannot run docker-registry: {exc}")


@pytest.fixture(scope="module")
def plain_registry(tmp_path_factory):  # type: ignore[no-untyped-def]
    if registry_support.registry_binary() is None:
        pytest.skip("docker-registry is not installed (apt-get install docker-registry)")
    server = _start_or_skip(tmp_path_factory, "plain")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def token_registry(tmp_path_factory):  # type: ignore[no-untyped-def]
    if registry_support.registry_binary() is None:
        pytest.skip("docker-registry is not installed (apt-get install docker-registry)")
    ca = registry_support.make_ca(tmp_path_factory.mktemp("speed-ca"))
    server = _start_or_skip(tmp_path_factory, "token", ca)
    yield server
    server.stop()


@pytest.fixture()
def counting_proxy(plain_registry):  # type: ignore[no-untyped-def]
    """A plain forwarding proxy in front of the plain registry: ``.seen()`` lists what reached it."""
    proxy = FaultProxy(plain_registry.url)
    yield proxy
    proxy.stop()
