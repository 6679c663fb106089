"""Proxies as users expect them from requests and docker: the variables, NO_PROXY, and a real proxy.

The real proxy is Debian's tinyproxy on loopback (tests/support/tinyproxy.py); the registries are
the suite's own (plain HTTP, and TLS with basic auth for CONNECT). Every test sets the proxy
variables it needs and clears the rest, upper and lower case.
"""

from __future__ import annotations

import pytest

from imagelint.errors import EXIT_UNREADABLE, RegistryError
from imagelint.sources.proxy import Proxy, ProxyConfigError, bypasses_proxy, parse_proxy_url, proxy_for
from tests.hostile.cli import assert_unreadable, run_cli
from tests.sources.test_registry import layer_members, open_name, opts, repo, unique_image
from tests.support.registry import server_ssl_context
from tests.support.tinyproxy import ProxyUnavailable, TlsFront, start_tinyproxy

PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
PROXY_PASSWORD = "pr0xy-pa55-n3ver-sh0wn"


@pytest.fixture
def env(monkeypatch):
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


def _started(tmp_path, tls_registry, auth: bool):
    """A tinyproxy that tunnels (CONNECT) to the TLS registry's port only."""
    try:
        proxy = start_tinyproxy(tmp_path / "proxy", connect_ports=[int(tls_registry.host.rsplit(":", 1)[1])],
                                basic_auth=("proxyuser", PROXY_PASSWORD) if auth else None)
    except ProxyUnavailable as exc:
        pytest.skip(str(exc))
    yield proxy
    proxy.stop()


@pytest.fixture
def proxy(tmp_path, tls_registry):
    yield from _started(tmp_path, tls_registry, auth=False)


@pytest.fixture
def auth_proxy(tmp_path, tls_registry):
    """The same, asking for Basic credentials (``proxyuser``, ``PROXY_PASSWORD``)."""
    yield from _started(tmp_path, tls_registry, auth=True)


def _pushed(*registries) -> tuple[str, list]:
    """A new repository holding one image of its own on each registry, tag 1."""
    r, built = repo(), []
    for registry in registries:
        built.append(unique_image().build())
        registry.push(r, "1", built[-1])
    return r, built


def _read_plain(registry, r: str):
    [image], _ = open_name(f"{registry.host}/{r}:1", opts(insecure_registries=(registry.host,)))
    return image


def _read_tls(registry, r: str, tmp_path):
    config_dir = registry.docker_config_dir(tmp_path / "docker")
    [image], client = open_name(f"{registry.host}/{r}:1", opts(ca_cert=registry.ca_cert, docker_config=str(config_dir)))
    return image, client


# --- NO_PROXY and the variables ----------------------------------------------------------------------


@pytest.mark.parametrize("host, port, no_proxy, bypass", [
    ("registry.corp", 443, ".corp", True),
    ("corp", 443, ".corp", True),
    ("a.b.corp", 443, "corp", True),
    ("registry.corp", 443, "*.corp", True),
    ("xcorp", 443, "corp", False),
    ("corp.example", 443, "corp", False),
    ("Registry.Corp.", 443, "registry.corp", True),
    ("registry.corp", 5000, "registry.corp:5000", True),
    ("registry.corp", 5001, "registry.corp:5000", False),
    ("10.1.2.3", 5000, "10.0.0.0/8", True),
    ("11.1.2.3", 5000, "10.0.0.0/8", False),
    ("10.1.2.3", 5000, "example.com, 10.0.0.0/8", True),
    ("10.1.2.3", 5000, "example.com 10.0.0.0/8", True),
    ("192.168.7.9", 443, "192.168.7.9", True),
    ("192.168.7.9", 443, "192.168.7.10", False),
    ("::1", 5000, "[::1]:5000", True),
    ("fd00::12", 443, "fd00::/8", True),
    ("fe80::1", 443, "fd00::/8", False),
    ("10.1.2.3", 443, "corp", False),
    ("anything.example", 1, "*", True),
    ("registry.example", 443, "", False),
])
def test_no_proxy_entries(host: str, port: int, no_proxy: str, bypass: bool) -> None:
    assert bypasses_proxy(host, port, no_proxy) is bypass


def test_the_variables_lower_case_first_and_the_scheme_before_all_proxy() -> None:
    environ = {"HTTPS_PROXY": "http://upper:1", "https_proxy": "http://lower:2", "ALL_PROXY": "http://all:3"}
    assert proxy_for("https", "r.example", 443, environ) == Proxy("http://lower:2")
    assert proxy_for("http", "r.example", 80, environ) == Proxy("http://all:3")
    assert proxy_for("https", "10.1.2.3", 443, {**environ, "NO_PROXY": "10.0.0.0/8"}) is None
    assert proxy_for("https", "r.example", 443, {}) is None


def test_proxy_urls_https_credentials_and_what_is_refused() -> None:
    assert parse_proxy_url("proxy.corp:3128") == Proxy("http://proxy.corp:3128")
    assert parse_proxy_url("https://proxy.corp") == Proxy("https://proxy.corp:443")
    with_auth = parse_proxy_url("http://me:p%40ss@proxy.corp:3128")
    assert (with_auth.url, with_auth.username, with_auth.password) == ("http://proxy.corp:3128", "me", "p@ss")
    assert "p@ss" not in repr(with_auth) and with_auth.name == "proxy.corp:3128"
    for bad, why in (("socks5://proxy:1080", "socks5://"), ("http://:3128", "no host"), ("http://proxy:port", "port")):
        with pytest.raises(ProxyConfigError, match=why):
            parse_proxy_url(bad)


# --- through a real proxy --------------------------------------------------------------------------


@pytest.mark.registry
def test_a_plain_http_registry_through_the_proxy(proxy, plain_registry, tmp_path, env) -> None:
    r, [built] = _pushed(plain_registry)
    env.setenv("http_proxy", proxy.url())
    image = _read_plain(plain_registry, r)
    assert image.digest == built.digest and layer_members(image.layers[0])["etc/marker"]
    seen = proxy.requests()
    assert f"GET http://{plain_registry.host}/v2/{r}/manifests/1 HTTP/1.1" in seen, seen
    assert any(f"/v2/{r}/blobs/{image.layers[0].digest}" in line for line in seen), seen


@pytest.mark.registry
def test_a_tls_registry_through_a_connect_tunnel(proxy, tls_registry, tmp_path, env) -> None:
    """HTTPS_PROXY: CONNECT to the registry, then TLS (its certificate checked with --ca-cert) end to end."""
    r, [built] = _pushed(tls_registry)
    env.setenv("HTTPS_PROXY", proxy.url())
    image, client = _read_tls(tls_registry, r, tmp_path)
    assert image.digest == built.digest and [rec.status for rec in client.log] == [401, 200, 200]
    seen = proxy.requests()
    assert seen and all(line.startswith(f"CONNECT {tls_registry.host} HTTP/1.") for line in seen), seen


@pytest.mark.registry
def test_an_https_proxy_url(auth_proxy, plain_registry, tls_registry, registry_ca, tmp_path, env) -> None:
    """TLS to the proxy itself (verified against the system store, which SSL_CERT_FILE names here),
    then plain requests forwarded, or CONNECT and the registry's own TLS inside that."""
    r, (plain, tls) = _pushed(plain_registry, tls_registry)
    front = TlsFront(auth_proxy.host, server_ssl_context(registry_ca))
    try:
        env.setenv("SSL_CERT_FILE", registry_ca.cert)
        env.setenv("HTTPS_PROXY", f"https://proxyuser:{PROXY_PASSWORD}@{front.host}")
        env.setenv("HTTP_PROXY", f"https://proxyuser:{PROXY_PASSWORD}@{front.host}")
        assert _read_plain(plain_registry, r).digest == plain.digest
        assert _read_tls(tls_registry, r, tmp_path)[0].digest == tls.digest
        seen = auth_proxy.requests()
        assert f"GET http://{plain_registry.host}/v2/{r}/manifests/1 HTTP/1.1" in seen, seen
        assert any(line.startswith(f"CONNECT {tls_registry.host} ") for line in seen), seen
        env.delenv("SSL_CERT_FILE")  # the proxy's certificate is no longer trusted
        with pytest.raises(RegistryError, match=f"TLS to the proxy {front.host}.*certificate"):
            _read_tls(tls_registry, r, tmp_path)
    finally:
        front.stop()


@pytest.mark.registry
def test_the_certificate_is_still_checked_through_the_tunnel(proxy, tls_registry, tmp_path, env) -> None:
    env.setenv("HTTPS_PROXY", proxy.url())
    with pytest.raises(RegistryError, match="certificate"):
        open_name(f"{tls_registry.host}/x/y:1", opts())  # no --ca-cert: the test CA is not trusted
    # Two tunnels, no request through either: the loopback registry's TLS probe (which trusts no
    # CA), then the handshake against the CA store, which fails on the certificate.
    assert [line.split(" HTTP/")[0] for line in proxy.requests()] == [f"CONNECT {tls_registry.host}"] * 2


@pytest.mark.registry
def test_a_proxy_that_requires_basic_auth(auth_proxy, plain_registry, tls_registry, tmp_path, env) -> None:
    """Credentials in the proxy URL go as Proxy-Authorization, on plain requests and on CONNECT."""
    r, (plain, tls) = _pushed(plain_registry, tls_registry)
    env.setenv("HTTP_PROXY", auth_proxy.url("proxyuser", PROXY_PASSWORD))
    env.setenv("HTTPS_PROXY", auth_proxy.url("proxyuser", PROXY_PASSWORD))
    assert _read_plain(plain_registry, r).digest == plain.digest
    assert _read_tls(tls_registry, r, tmp_path)[0].digest == tls.digest
    assert any(line.startswith(f"CONNECT {tls_registry.host} ") for line in auth_proxy.requests())


def _cli_through(proxy_url: str, scheme: str, registry):
    env = {v: "" for v in PROXY_VARIABLES} | {v.upper(): "" for v in PROXY_VARIABLES}
    env[f"{scheme.upper()}_PROXY"] = proxy_url
    return run_cli("inspect", f"registry:{registry.host}/x/y:1", "--insecure-registry", registry.host,
                   "--retries", "2", env=env)


@pytest.mark.registry
@pytest.mark.parametrize("password", [None, "wr0ng-pr0xy-pa55"])
@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_proxy_refusing_us_is_one_line_exit_3_without_the_password(auth_proxy, password, scheme, plain_registry,
                                                                        tls_registry) -> None:
    registry = plain_registry if scheme == "http" else tls_registry
    run = _cli_through(auth_proxy.url() if password is None else auth_proxy.url("proxyuser", password), scheme, registry)
    assert run.returncode == EXIT_UNREADABLE
    if scheme == "http" and password:
        # tinyproxy answers wrong credentials on a forwarded request with a 401 of its own,
        # which no client can tell from the registry's: still one line, exit 3, no password
        line = assert_unreadable(run, registry.host, "401")
    else:
        line = assert_unreadable(run, registry.host, f"the proxy {auth_proxy.host}")
        assert ("rejected the credentials" if password else "requires credentials") in line, line
        assert len(auth_proxy.requests()) <= 2, auth_proxy.requests()  # not retried: the answer would not change
    assert password is None or password not in run.output
    assert PROXY_PASSWORD not in run.output


@pytest.mark.registry
def test_no_proxy_bypasses_the_proxy_for_a_cidr_range(proxy, plain_registry, tmp_path, env) -> None:
    r, [built] = _pushed(plain_registry)
    env.setenv("http_proxy", proxy.url())
    env.setenv("NO_PROXY", "registry.corp, 127.0.0.0/8")
    assert _read_plain(plain_registry, r).digest == built.digest
    assert proxy.requests() == []
    env.setenv("NO_PROXY", "registry.corp, 10.0.0.0/8")  # another range: through the proxy again
    _read_plain(plain_registry, r)
    assert proxy.requests(), "NO_PROXY without a matching entry bypassed the proxy"


def test_a_socks_proxy_is_refused_with_the_reason(env) -> None:
    env.setenv("ALL_PROXY", "socks5://127.0.0.1:1080")
    with pytest.raises(RegistryError, match=r"socks5://.*http:// and https:// proxies"):
        open_name("registry.invalid/x/y:1", opts(retries=0))
