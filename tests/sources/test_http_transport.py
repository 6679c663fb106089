"""imagelint.sources.http over urllib3: kept-alive connections, short and broken answers, requests
that would split their message, the certificate's name.

The registry protocol, TLS choices, retries, redirects and hostile answers are tested through
the registry source (test_registry.py, tests/hostile/); proxies against a real one in
test_proxies.py; these are the HTTP layer's own duties.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from imagelint.sources.http import ConnectionLost, HttpTransport, TransportFailure, read_capped
from tests.support.registry import server_ssl_context


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


def test_plain_http_reads_no_ca_store(no_proxy_env, monkeypatch) -> None:
    """A TLS context reads the whole CA store: it is made for the first https request, never for http."""
    made: list[object] = []
    real = ssl.create_default_context
    monkeypatch.setattr(ssl, "create_default_context", lambda *a, **k: made.append(k) or real(*a, **k))
    origin = _Origin()
    try:
        transport = _transport()
        with transport.request("GET", f"http://{origin.host}/x") as response:
            assert read_capped(response, 100) == b"hello"
        assert made == []
        with pytest.raises(TransportFailure):  # the plain-http origin cannot speak TLS
            transport.request("GET", f"https://{origin.host}/x")
        assert len(made) == 1, "an https request makes its context"
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
        with pytest.raises(ConnectionLost):
            read_capped(response, 100)
        response.close()
    finally:
        origin.stop()


class _Peer:
    """Accepts one connection on loopback, reads one request head, keeps it, sends ``answer``
    exactly as given and closes."""

    def __init__(self, answer: bytes, host: str = "127.0.0.1", tls: ssl.SSLContext | None = None) -> None:
        self.answer = answer
        self.tls = tls
        self.requests: list[bytes] = []
        self.sock = socket.create_server((host, 0))
        self.host = f"{host}:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        try:
            client, _ = self.sock.accept()
            if self.tls is not None:
                client = self.tls.wrap_socket(client, server_side=True)
        except OSError:  # closed by the test, or the client refused our certificate
            return
        with client:
            buf = b""
            while b"\r\n\r\n" not in buf:
                data = client.recv(65536)
                if not data:
                    return
                buf += data
            self.requests.append(buf.partition(b"\r\n\r\n")[0])
            client.sendall(self.answer)

    def close(self) -> None:
        self.sock.close()


@pytest.mark.parametrize("answer", [
    b"SSH-2.0-OpenSSH\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70_000 + b"\r\n\r\n",
    b"HTTP/1.1 200 OK\r\n" + b"X: 1\r\n" * 101 + b"\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
    b"",
], ids=["not-http", "long-header-line", "too-many-headers", "conflicting-lengths", "nothing"])
def test_a_broken_response_head_is_a_failed_connection(answer: bytes, no_proxy_env) -> None:
    peer = _Peer(answer)
    try:
        with pytest.raises(TransportFailure) as failure:
            _transport().request("GET", f"http://{peer.host}/v2/").close()
        assert failure.value.kind == "connection" and "\n" not in failure.value.detail, failure.value.detail
    finally:
        peer.close()


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nshort",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
], ids=["short-length", "short-chunk", "bad-chunk-size"])
def test_a_body_cut_short_or_misframed_is_a_lost_connection(answer: bytes, no_proxy_env) -> None:
    """An OSError, which the registry source retries or resumes (Range) like a dropped connection."""
    peer = _Peer(answer)
    try:
        with _transport().request("GET", f"http://{peer.host}/v2/") as response, pytest.raises(ConnectionLost):
            read_capped(response, 100)
    finally:
        peer.close()


@pytest.mark.parametrize("headers", [{"X-Injected": "a\r\nEvil: 1"}, {"Authorization": "Bearer s3cret\nX: 1"},
                                     {"X": "nul\x00"}])
def test_a_request_that_would_split_its_message_is_never_sent(headers: dict[str, str], no_proxy_env) -> None:
    peer = _Peer(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    try:
        with pytest.raises(TransportFailure) as failure:
            _transport().request("GET", f"http://{peer.host}/v2/", headers)
        assert failure.value.kind == "invalid" and "s3cret" not in failure.value.detail
        for bad_target in ("/a b", "/a\r\nX: y", "/\u00e9"):
            with pytest.raises(TransportFailure, match="invalid"):
                _transport().request("GET", f"http://{peer.host}{bad_target}")
        time.sleep(0.05)
        assert peer.requests == []
    finally:
        peer.close()


@pytest.mark.parametrize("host, name, ok", [("127.0.0.1", "127.0.0.1", True), ("127.0.0.1", "localhost", True),
                                            ("127.0.0.2", "127.0.0.2", False)])
def test_tls_checks_the_certificate_against_the_name_connected_to(registry_ca, host: str, name: str, ok: bool,
                                                                  no_proxy_env) -> None:
    """The certificate names localhost and 127.0.0.1: another loopback address must not pass."""
    ca = registry_ca
    peer = _Peer(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", host=host, tls=server_ssl_context(ca))
    transport = HttpTransport(lambda url: ca.cert, timeout=5.0, retries=0, backoff=0.0)
    url = f"https://{name}:{peer.host.rsplit(':', 1)[1]}/"
    try:
        if not ok:
            with pytest.raises(TransportFailure) as failure:
                transport.request("GET", url)
            assert failure.value.kind == "tls" and "mismatch" in failure.value.detail, failure.value.detail
            return
        with transport.request("GET", url) as response:
            assert read_capped(response, 10) == b"ok"
    finally:
        peer.close()


def test_an_explicit_ca_wins_over_requests_ca_bundle(registry_ca, no_proxy_env) -> None:
    """REQUESTS_CA_BUNDLE, SSL_CERT_FILE: the machine's choice, never over --ca-cert or the default bundle."""
    ca = registry_ca
    for name in ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "CURL_CA_BUNDLE"):
        no_proxy_env.setenv(name, ca.cert)  # the test's CA offered by the environment
    import certifi

    # verify=True: the default bundle; a path: that file only (--ca-cert), never the environment's
    for verify in (True, certifi.where()):
        peer = _Peer(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", tls=server_ssl_context(ca))
        try:
            with pytest.raises(TransportFailure) as failure:
                HttpTransport(lambda url: verify, timeout=5.0, retries=0, backoff=0.0).request("GET", f"https://{peer.host}/")
            assert failure.value.kind == "tls" and "certificate" in failure.value.detail
        finally:
            peer.close()


def test_retry_after_as_seconds_or_an_http_date() -> None:
    from email.utils import formatdate

    from imagelint.sources.http import retry_after_seconds

    assert retry_after_seconds("7") == 7 and retry_after_seconds(" 120 ") == 120
    assert 25 <= retry_after_seconds(formatdate(time.time() + 30, usegmt=True)) <= 30
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0  # a date past: no wait
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None and retry_after_seconds("-5") is None


def test_a_name_that_does_not_resolve_is_said_once_and_not_retried(monkeypatch, no_proxy_env) -> None:
    """Issue 38: offline, a DNS failure was retried 5 times and said ``[Errno -2] Name or service
    not known``. The resolver's "no such name" cannot change by retrying (as docker pull gives up
    at once); a temporary failure (EAI_AGAIN) is still retried."""
    import urllib3.util.connection

    calls: list[str] = []

    def no_name(host, *args, **kwargs):
        calls.append(host)
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(urllib3.util.connection.socket, "getaddrinfo", no_name)
    transport = HttpTransport(lambda url: True, timeout=5.0, retries=4, backoff=0.001, sleep=lambda s: None)
    with pytest.raises(TransportFailure) as err:
        transport.request("GET", "https://nvcr.io/v2/")
    assert err.value.kind == "resolve" and err.value.attempts == 1 and len(calls) == 1
    assert err.value.detail.startswith("cannot resolve nvcr.io (Name or service not known)")

    calls.clear()

    def not_now(host, *args, **kwargs):
        calls.append(host)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(urllib3.util.connection.socket, "getaddrinfo", not_now)
    with pytest.raises(TransportFailure) as err:
        transport.request("GET", "https://nvcr.io/v2/")
    assert err.value.kind == "connection" and len(calls) == 5 and "cannot resolve nvcr.io" in err.value.detail


def test_a_request_says_what_it_waits_for_while_it_waits(no_proxy_env) -> None:
    """Issue 38: a registry that accepts and never answers showed '0 B inflated' (or nothing) for a
    minute. While a request waits, the progress line can say for whom and which attempt."""
    from imagelint import progress

    seen: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802
            seen.append(progress.waiting_for())
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host = f"127.0.0.1:{server.server_address[1]}"
    try:
        transport = HttpTransport(lambda url: True, timeout=5.0, retries=3, backoff=0.001, sleep=lambda s: None)
        transport.request("GET", f"http://{host}/v2/").close()
    finally:
        server.shutdown()
        server.server_close()
    assert seen == [f"{host}, attempt 1 of 4"] and progress.waiting_for() is None
    from imagelint.cli.progress import line_for

    assert line_for("registry:r/x:1", 12, 0, 200, f"{host}, attempt 2 of 4") == \
        f"imagelint: reading registry:r/x:1 … waiting for {host}, attempt 2 of 4, 12 s"
    assert "inflated" in line_for("registry:r/x:1", 12, 5 << 20, 200, "ignored once bytes flow")
