"""imagelint.sources.http on its own HTTP/1.1 (imagelint.sources.wire): proxies, kept-alive connections, short bodies.

The registry protocol, TLS choices, retries, redirects and hostile answers are tested through
the registry source (test_registry.py, tests/hostile/); these are the HTTP layer's own duties.
"""

from __future__ import annotations

import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from imagelint.sources.http import HttpTransport, TransportFailure, read_capped
from imagelint.sources.wire import IncompleteRead
from tests.sources.test_registry import open_name, opts, repo, unique_image


class _Origin:
    """An HTTP/1.1 server on loopback that answers every GET with ``body`` and remembers what came:
    the request target as sent (``/x`` or a proxy's ``http://host/x``), headers, and each client port."""

    def __init__(self, body: bytes = b"hello", length: int | None = None, hang_up: bool = False) -> None:
        seen, ports = self.seen, self.ports = [], []

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                seen.append((self.path, dict(self.headers.items())))
                ports.append(self.client_address[1])
                self.send_response(200)
                self.send_header("Content-Length", str(len(body) if length is None else length))
                self.end_headers()
                self.wfile.write(body)
                if length is not None and length > len(body):
                    self.close_connection = True  # a body shorter than its Content-Length
                if hang_up:
                    self.close_connection = True  # an idle keep-alive connection the server drops

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _ConnectProxy:
    """A forward proxy that only tunnels (CONNECT host:port), remembering what it was asked."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._tunnel, args=(client,), daemon=True).start()

    def _tunnel(self, client: socket.socket) -> None:
        with client:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = client.recv(4096)
                if not chunk:
                    return
                head += chunk
            lines = head.split(b"\r\n\r\n")[0].decode().split("\r\n")
            headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
            self.requests.append((lines[0], headers))
            method, target, _ = lines[0].split(" ")
            if method != "CONNECT":
                client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
                return
            host, port = target.rsplit(":", 1)
            with socket.create_connection((host, int(port))) as upstream:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                pair = {client: upstream, upstream: client}
                while True:
                    readable, _, _ = select.select(list(pair), [], [], 10)
                    if not readable:
                        return
                    for sock in readable:
                        data = sock.recv(65536)
                        if not data:
                            return
                        pair[sock].sendall(data)

    def stop(self) -> None:
        self._listener.close()


@pytest.fixture
def no_proxy_env(monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def _transport() -> HttpTransport:
    return HttpTransport(lambda url: True, timeout=5.0, retries=0, backoff=0.0)


def test_requests_to_one_origin_share_a_kept_alive_connection(no_proxy_env) -> None:
    origin = _Origin()
    try:
        transport = _transport()
        for _ in range(3):
            with transport.request("GET", f"http://{origin.host}/x") as response:
                assert read_capped(response, 100) == b"hello"
        assert len(origin.ports) == 3 and len(set(origin.ports)) == 1, origin.ports
    finally:
        origin.stop()


def test_a_kept_connection_the_server_dropped_is_replaced_without_an_error(no_proxy_env) -> None:
    origin = _Origin(hang_up=True)  # answers as keep-alive, then closes: what an idle timeout does
    try:
        transport = _transport()
        for _ in range(3):
            with transport.request("GET", f"http://{origin.host}/x") as response:
                assert read_capped(response, 100) == b"hello"
            time.sleep(0.05)  # the server's close arrives while the connection sits in the pool
        assert len(set(origin.ports)) == 3 and [r.status for r in transport.log] == [200, 200, 200]
    finally:
        origin.stop()


def test_a_response_closed_unread_does_not_poison_the_next_request(no_proxy_env) -> None:
    origin = _Origin(body=b"x" * 200_000)  # over the drain limit: its connection is dropped
    try:
        transport = _transport()
        transport.request("GET", f"http://{origin.host}/big").close()
        with transport.request("GET", f"http://{origin.host}/again") as response:
            assert read_capped(response, 300_000) == b"x" * 200_000
        assert len(set(origin.ports)) == 2
    finally:
        origin.stop()


def test_a_body_shorter_than_its_content_length_is_a_read_error(no_proxy_env) -> None:
    origin = _Origin(body=b"short", length=50)
    try:
        response = _transport().request("GET", f"http://{origin.host}/x")
        with pytest.raises(IncompleteRead):
            read_capped(response, 100)
        response.close()
    finally:
        origin.stop()


def test_http_through_a_proxy_sends_the_whole_url_and_the_proxy_credentials(no_proxy_env) -> None:
    proxy, origin = _Origin(body=b"via proxy"), "registry.invalid:5000"
    try:
        no_proxy_env.setenv("HTTP_PROXY", f"http://user:p%40ss@{proxy.host}")
        with _transport().request("GET", f"http://{origin}/v2/") as response:
            assert read_capped(response, 100) == b"via proxy"
        [(target, headers)] = proxy.seen
        assert target == f"http://{origin}/v2/"
        assert headers["Proxy-Authorization"] == "Basic dXNlcjpwQHNz"  # user:p@ss
    finally:
        proxy.stop()


def test_no_proxy_exempts_a_host(no_proxy_env) -> None:
    proxy, origin = _Origin(body=b"proxy"), _Origin(body=b"direct")
    try:
        no_proxy_env.setenv("http_proxy", f"http://{proxy.host}")
        no_proxy_env.setenv("no_proxy", "127.0.0.1")
        with _transport().request("GET", f"http://{origin.host}/x") as response:
            assert read_capped(response, 100) == b"direct"
        assert proxy.seen == [] and len(origin.seen) == 1
    finally:
        proxy.stop()
        origin.stop()


def test_an_https_proxy_url_is_refused_with_a_clear_reason(no_proxy_env) -> None:
    no_proxy_env.setenv("HTTPS_PROXY", "https://proxy.invalid:3128")
    with pytest.raises(TransportFailure) as failure:
        _transport().request("GET", "https://registry.invalid/v2/")
    assert failure.value.kind == "invalid" and "http:// proxy" in failure.value.detail


@pytest.mark.registry
def test_a_tls_registry_through_a_connect_tunnel(tls_registry, tmp_path, no_proxy_env) -> None:
    """HTTPS_PROXY: a CONNECT tunnel to the registry, TLS (and its certificate check) end to end."""
    built = unique_image().build()
    r = repo()
    tls_registry.push(r, "1", built)
    proxy = _ConnectProxy()
    try:
        no_proxy_env.setenv("HTTPS_PROXY", proxy.url)
        config_dir = tls_registry.docker_config_dir(tmp_path / "docker")
        [image], client = open_name(f"{tls_registry.host}/{r}:1",
                                    opts(ca_cert=tls_registry.ca_cert, docker_config=str(config_dir)))
        assert image.digest == built.digest
        assert proxy.requests and all(line.startswith(f"CONNECT {tls_registry.host} ") for line, _ in proxy.requests)
        assert all("Authorization" not in headers for _, headers in proxy.requests), "credentials went to the proxy"
    finally:
        proxy.stop()
